// GET /profile: the cheapest call any valid token may make (it needs no scope), and the one
// whose answer says what the token may do: the user's name, whether it is restricted (then it
// also needs grants), and the token's scopes (the X-OAuth-Scopes header).
import { z } from "zod";
import type { CallOptions, Transport } from "./http.ts";
import { parseScopes, type GrantedScopes } from "./scopes.ts";

const profileSchema = z.object({ username: z.string(), restricted: z.boolean().default(false) });

export interface TokenProfile {
  username: string;
  restricted: boolean;
  /** What the token's X-OAuth-Scopes header grants; undefined when the answer had none. */
  scopes: GrantedScopes | undefined;
  /** The header as the API sent it. */
  scopesHeader: string | undefined;
}

export class ProfileApi {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  async get(opts?: CallOptions): Promise<TokenProfile> {
    let header: string | undefined;
    const profile = await this.transport.request({
      method: "GET", route: "/profile", schema: profileSchema,
      onHeaders: (h) => {
        const v = h["x-oauth-scopes"];
        header = Array.isArray(v) ? v.join(" ") : v;
      },
    }, opts);
    return { username: profile.username, restricted: profile.restricted, scopes: header === undefined ? undefined : parseScopes(header), scopesHeader: header };
  }
}
