// Bearer tokens, OAuth scopes and users. A token belongs to a user; an unrestricted user may
// do anything its token's scopes allow, a restricted user additionally needs grants: the
// global add_databases / add_nodebalancers grants to create, and per-entity read_only /
// read_write grants to see or change an object (granted automatically on what it creates).
import { z } from "zod";
import { ApiError, forbidden } from "./errors.ts";

export const permissionSchema = z.enum(["read_only", "read_write"]);
export type Permission = z.infer<typeof permissionSchema>;
export type Area = "databases" | "nodebalancers" | "firewall" | "vpc" | "ips" | "account";

const entityGrantSchema = z.object({ id: z.number().int(), permissions: permissionSchema });

/** Accounts never see each other's objects or share limits; every token belongs to one. */
export const DEFAULT_ACCOUNT = "default";
const accountName = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "an account name is 1..63 lower-case letters, digits or '-'");

export const userSchema = z.object({
  username: z.string().min(1),
  /** The account the user (and so its tokens) belongs to. */
  account: accountName.default(DEFAULT_ACCOUNT),
  restricted: z.boolean().default(false),
  grants: z.object({
    global: z.object({
      add_databases: z.boolean().default(false),
      add_nodebalancers: z.boolean().default(false),
    }).prefault({}),
    database: z.array(entityGrantSchema).default([]),
    nodebalancer: z.array(entityGrantSchema).default([]),
  }).prefault({}),
});
export type User = z.infer<typeof userSchema>;

export const tokenSchema = z.object({
  token: z.string().min(1),
  /** "*" or a space/comma separated list such as "databases:read_only nodebalancers:read_write". */
  scopes: z.string().default("*"),
  username: z.string().min(1).optional(),
  /** The account of a token without a user of its own (default: the user's account). */
  account: accountName.optional(),
});
export type TokenConfig = z.infer<typeof tokenSchema>;

export const DEFAULT_USERNAME = "emulator-admin";

export interface Principal {
  token: string;
  scopes: string;
  user: User;
  account: string;
}

const SCOPE_PATTERN = /^(\*|(databases|nodebalancers|firewall|linodes|account|events|vpc|ips)+:(read_only|read_write))$/;

export function validateScopes(scopes: string): string | null {
  const parts = scopes.split(/[\s,]+/).filter((p) => p !== "");
  if (parts.length === 0) return "scopes must not be empty";
  for (const p of parts) if (!SCOPE_PATTERN.test(p)) return `invalid scope ${p}`;
  return null;
}

export function hasScope(scopes: string, area: Area | null, level: Permission): boolean {
  const parts = scopes.split(/[\s,]+/);
  if (parts.includes("*")) return true;
  if (area === null) return true;
  if (parts.includes(`${area}:read_write`)) return true;
  return level === "read_only" && parts.includes(`${area}:read_only`);
}

export function acceptedScope(area: Area | null, level: Permission): string {
  return area === null ? "*" : `${area}:${level}`;
}

export class AuthRegistry {
  readonly tokens = new Map<string, TokenConfig>();
  readonly users = new Map<string, User>();

  constructor() {
    this.users.set(DEFAULT_USERNAME, userSchema.parse({ username: DEFAULT_USERNAME }));
  }

  addUser(user: User): void {
    this.users.set(user.username, user);
  }

  addToken(token: TokenConfig): void {
    const username = token.username ?? DEFAULT_USERNAME;
    const user = this.users.get(username);
    if (user === undefined) throw new Error(`unknown user ${username}`);
    if (token.username !== undefined && token.account !== undefined && token.account !== user.account) {
      throw new Error(`token of user ${username} (account ${user.account}) cannot belong to account ${token.account}`);
    }
    this.tokens.set(token.token, { ...token, username });
  }

  authenticate(header: string | undefined): Principal {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
    const config = match?.[1] === undefined ? undefined : this.tokens.get(match[1]);
    if (config === undefined) throw new ApiError(401, [{ reason: "Invalid Token" }]);
    const user = this.users.get(config.username ?? DEFAULT_USERNAME);
    if (user === undefined) throw new ApiError(401, [{ reason: "Invalid Token" }]);
    return { token: config.token, scopes: config.scopes, user, account: config.account ?? user.account };
  }

  snapshot(): { tokens: { scopes: string; username: string | undefined; account: string; token: string }[]; users: User[] } {
    // Tokens are shown masked: the admin endpoint must not leak them into logs or dumps.
    return {
      tokens: [...this.tokens.values()].map((t) => ({ token: `${t.token.slice(0, 4)}…`, scopes: t.scopes, username: t.username, account: t.account ?? this.users.get(t.username ?? DEFAULT_USERNAME)?.account ?? DEFAULT_ACCOUNT })),
      users: [...this.users.values()],
    };
  }
}

export function requireScope(principal: Principal, area: Area | null, level: Permission): void {
  if (!hasScope(principal.scopes, area, level)) {
    throw new ApiError(401, [{ reason: "Your OAuth token is not authorized to use this endpoint." }]);
  }
}

export function requireUnrestricted(principal: Principal): void {
  if (principal.user.restricted) throw forbidden("Unauthorized");
}

export function requireGlobalGrant(principal: Principal, grant: "add_databases" | "add_nodebalancers"): void {
  if (principal.user.restricted && !principal.user.grants.global[grant]) throw forbidden("Unauthorized");
}

type EntityKind = "database" | "nodebalancer";

export function entityPermission(principal: Principal, kind: EntityKind, id: number): Permission | null {
  if (!principal.user.restricted) return "read_write";
  return principal.user.grants[kind].find((g) => g.id === id)?.permissions ?? null;
}

/** Restricted users cannot see ungranted objects (404) and need read_write to change one (403). */
export function requireEntity(principal: Principal, kind: EntityKind, id: number, level: Permission): void {
  const perm = entityPermission(principal, kind, id);
  if (perm === null) throw new ApiError(404, [{ reason: "Not found" }]);
  if (level === "read_write" && perm !== "read_write") throw forbidden("Unauthorized");
}

export function grantCreated(principal: Principal, kind: EntityKind, id: number): void {
  if (principal.user.restricted) principal.user.grants[kind].push({ id, permissions: "read_write" });
}
