// The operator's Linode token for `install`: from --token-file, else LINODE_TOKEN. It is held in
// memory only to be written on kubectl's stdin; it is never printed, logged or put in argv.
import { readFile } from "node:fs/promises";
import { z } from "zod";
import type { TokenSource } from "./install-plan.ts";

const tokenSchema = z.string().min(1).max(1024).regex(/^[\x21-\x7e]+$/, "printable ASCII without spaces");

export interface Token { source: TokenSource; value: string | undefined }

export async function readToken(tokenFile: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<Token> {
  if (tokenFile !== undefined) {
    const text = (await readFile(tokenFile, "utf8")).trim();
    const r = tokenSchema.safeParse(text);
    // The message never quotes the file's content.
    if (!r.success) throw new Error(`--token-file ${tokenFile}: not a token (${r.error.issues[0]?.message ?? "invalid"})`);
    return { source: { kind: "file", path: tokenFile }, value: r.data };
  }
  const fromEnv = env.LINODE_TOKEN?.trim();
  if (fromEnv !== undefined && fromEnv !== "") {
    const r = tokenSchema.safeParse(fromEnv);
    if (!r.success) throw new Error(`LINODE_TOKEN: not a token (${r.error.issues[0]?.message ?? "invalid"})`);
    return { source: { kind: "env" }, value: r.data };
  }
  return { source: { kind: "existing" }, value: undefined };
}
