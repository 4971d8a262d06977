// OAuth scopes: what a token's `X-OAuth-Scopes` answer header grants ("*", or a list such as
// "databases:read_write nodebalancers:read_only"), and what each route this client calls needs
// (the API reference's per-operation scope, which the API also names in
// `X-Accepted-OAuth-Scopes`). A read_write scope includes read_only. Routes needing no scope
// (the engines and plans catalogue, the profile) are answered for any valid token.
export type ScopeLevel = "read_only" | "read_write";

export interface Scope {
  area: string;
  level: ScopeLevel;
}

/** What a token holds: every scope, or the listed ones. */
export type GrantedScopes = "*" | readonly Scope[];

const SCOPE = /^([a-z_]+):(read_only|read_write)$/;

/** Parses the header (space- or comma-separated); unknown words are ignored, as they grant nothing we need. */
export function parseScopes(header: string): GrantedScopes {
  const words = header.split(/[\s,]+/).filter((w) => w !== "");
  if (words.includes("*")) return "*";
  return words.flatMap((w) => {
    const m = SCOPE.exec(w);
    return m === null ? [] : [{ area: m[1] ?? "", level: m[2] as ScopeLevel }];
  });
}

export const scopeText = (s: Scope): string => `${s.area}:${s.level}`;

export function grants(granted: GrantedScopes, need: Scope): boolean {
  if (granted === "*") return true;
  return granted.some((g) => g.area === need.area && (g.level === "read_write" || need.level === "read_only"));
}

const ro = (area: string): Scope => ({ area, level: "read_only" });
const rw = (area: string): Scope => ({ area, level: "read_write" });
const DB = "/databases/{engine}/instances/{instanceId}";
const NB = "/nodebalancers/{nodeBalancerId}";
const CONFIG = `${NB}/configs/{configId}`;
const FW = "/networking/firewalls/{firewallId}";

/**
 * The scope of every route the client calls, by "METHOD template" (reference/openapi-subset.json;
 * null: any token). Engine routes are written once with {engine} for mysql and postgresql.
 * test/unit/token-scopes.test.ts checks that each route the client can call is here and that the
 * emulator asks the same.
 */
export const routeScopes: Readonly<Record<string, Scope | null>> = {
  "GET /profile": null,
  "GET /databases/engines": null,
  "GET /databases/engines/{engineId}": null,
  "GET /databases/types": null,
  "GET /databases/types/{typeId}": null,
  "GET /databases/{engine}/config": null,
  "GET /databases/instances": ro("databases"),
  "GET /databases/{engine}/instances": ro("databases"),
  "POST /databases/{engine}/instances": rw("databases"),
  [`GET ${DB}`]: ro("databases"),
  [`PUT ${DB}`]: rw("databases"),
  [`DELETE ${DB}`]: rw("databases"),
  [`GET ${DB}/credentials`]: ro("databases"),
  [`POST ${DB}/credentials/reset`]: rw("databases"),
  [`GET ${DB}/ssl`]: ro("databases"),
  [`POST ${DB}/patch`]: rw("databases"),
  [`POST ${DB}/suspend`]: rw("databases"),
  [`POST ${DB}/resume`]: rw("databases"),
  // Backups ask read_write even to be listed or read.
  [`GET ${DB}/backups`]: rw("databases"),
  [`POST ${DB}/backups`]: rw("databases"),
  [`GET ${DB}/backups/{backupId}`]: rw("databases"),
  [`DELETE ${DB}/backups/{backupId}`]: rw("databases"),
  [`POST ${DB}/backups/{backupId}/restore`]: rw("databases"),
  // PostgreSQL connection pools: the list asks read_write (the spec says so), one pool read_only.
  [`GET ${DB}/connection-pools`]: rw("databases"),
  [`POST ${DB}/connection-pools`]: rw("databases"),
  [`GET ${DB}/connection-pools/{poolName}`]: ro("databases"),
  [`PUT ${DB}/connection-pools/{poolName}`]: rw("databases"),
  [`DELETE ${DB}/connection-pools/{poolName}`]: rw("databases"),
  "GET /nodebalancers": ro("nodebalancers"),
  "POST /nodebalancers": rw("nodebalancers"),
  [`GET ${NB}`]: ro("nodebalancers"),
  [`PUT ${NB}`]: rw("nodebalancers"),
  [`DELETE ${NB}`]: rw("nodebalancers"),
  [`GET ${NB}/stats`]: ro("nodebalancers"),
  [`GET ${NB}/firewalls`]: ro("nodebalancers"),
  [`GET ${NB}/vpcs`]: ro("nodebalancers"),
  [`GET ${NB}/vpcs/{vpcConfigId}`]: ro("nodebalancers"),
  [`PUT ${NB}/firewalls`]: rw("nodebalancers"),
  [`GET ${NB}/configs`]: ro("nodebalancers"),
  [`POST ${NB}/configs`]: rw("nodebalancers"),
  [`GET ${CONFIG}`]: ro("nodebalancers"),
  [`PUT ${CONFIG}`]: rw("nodebalancers"),
  [`DELETE ${CONFIG}`]: rw("nodebalancers"),
  [`POST ${CONFIG}/rebuild`]: rw("nodebalancers"),
  [`GET ${CONFIG}/nodes`]: ro("nodebalancers"),
  [`POST ${CONFIG}/nodes`]: rw("nodebalancers"),
  // Reading one node asks read_write (the reference says so; listing them does not).
  [`GET ${CONFIG}/nodes/{nodeId}`]: rw("nodebalancers"),
  [`PUT ${CONFIG}/nodes/{nodeId}`]: rw("nodebalancers"),
  [`DELETE ${CONFIG}/nodes/{nodeId}`]: rw("nodebalancers"),
  [`GET ${FW}`]: ro("firewall"),
  [`GET ${FW}/devices`]: ro("firewall"),
  [`POST ${FW}/devices`]: rw("firewall"),
  [`DELETE ${FW}/devices/{deviceId}`]: rw("firewall"),
  "GET /vpcs": ro("vpc"),
  // Resource locks (spec 4.234.0, BETA): the account area.
  "GET /locks": ro("account"),
  "POST /locks": rw("account"),
  "GET /locks/{lockId}": ro("account"),
  "DELETE /locks/{lockId}": rw("account"),
};

/** The key of a route in routeScopes: the engine in a database route is a parameter. */
export function routeKey(method: string, route: string): string {
  return `${method} ${route.replace(/^\/databases\/(mysql|postgresql|valkey)\/(instances|config)/, "/databases/{engine}/$2")}`;
}

/** The scope a call needs; throws for a route missing from the table (a test finds it first). */
export function scopeOfRoute(method: string, route: string): Scope | null {
  const key = routeKey(method, route);
  if (!(key in routeScopes)) throw new Error(`no OAuth scope known for ${key}`);
  return routeScopes[key] ?? null;
}
