// An account is known by a hash of its token, never the token: what metrics label and what a
// resource's status records (a token rotated in place is a new id, the same account).
import { createHash } from "node:crypto";

export const tokenId = (token: string): string => `token-${createHash("sha256").update(token).digest("hex").slice(0, 12)}`;
