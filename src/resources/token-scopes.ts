// The Linode token scopes each kind needs, and why: the one table the operator's start-up check,
// `linode-operator doctor` and docs/token-scopes.md follow. Each scope is the highest any route
// the kind calls needs (src/linode/scopes.ts routeScopes; test/unit/token-scopes.test.ts checks
// the two agree). `feature`: needed only when a spec uses it, so a token without it works for
// everything else (doctor warns; the start-up check does not hold the operator back for it).
import type { Scope } from "../linode/index.ts";

export interface ScopeNeed {
  scope: Scope;
  why: string;
  /** The spec field that needs it; absent: every object of the kind does. */
  feature?: string;
}

const need = (area: string, level: Scope["level"], why: string, feature?: string): ScopeNeed =>
  ({ scope: { area, level }, why, ...(feature !== undefined ? { feature } : {}) });

export const kindScopes: Readonly<Record<string, readonly ScopeNeed[]>> = {
  ManagedDatabase: [
    need("databases", "read_write", "create, update, resize, upgrade and delete databases, read their credentials and CA certificate, and list their backups (the API asks read_write even to list backups)"),
  ],
  DatabaseSnapshot: [
    need("databases", "read_write", "take, list and delete a database's snapshots (backups)"),
  ],
  DatabaseConnectionPool: [
    need("databases", "read_write", "create, list, update and delete a PostgreSQL database's connection pools, and read its credentials and CA certificate for the pool's connection Secret (the API asks read_write even to list pools)"),
  ],
  NodeBalancer: [
    need("nodebalancers", "read_write", "create, update and delete NodeBalancers, their configs and nodes; read their statistics and firewalls"),
    need("firewall", "read_write", "look up the Cloud Firewall spec.firewallId names and assign it to the NodeBalancer (or remove it)", "spec.firewallId"),
    need("vpc", "read_only", "list the account's VPCs to find the subnet spec.vpcs or spec.frontendVpc names (by id or by VPC and subnet label), its region and range", "spec.vpcs"),
    need("account", "read_write", "make the cannot_delete lock spec.deletionProtection asks for, and remove the one it made (an unrestricted user's token only: locks are account-wide)", "spec.deletionProtection"),
  ],
};

/** What these kinds need, each scope once with every reason (features apart from what every object needs). */
export function neededScopes(kinds: readonly string[]): { scope: Scope; why: string[]; kinds: string[]; feature?: string }[] {
  const out = new Map<string, { scope: Scope; why: string[]; kinds: string[]; feature?: string }>();
  for (const kind of kinds) {
    for (const n of kindScopes[kind] ?? []) {
      const key = `${n.scope.area}:${n.scope.level}:${n.feature ?? ""}`;
      const entry = out.get(key) ?? { scope: n.scope, why: [], kinds: [], ...(n.feature !== undefined ? { feature: n.feature } : {}) };
      entry.why.push(`${kind}: ${n.why}`);
      entry.kinds.push(kind);
      out.set(key, entry);
    }
  }
  return [...out.values()];
}
