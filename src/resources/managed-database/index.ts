// The ManagedDatabase kind: its descriptor for the generic reconciler and its controller,
// which also watches the connection Secrets it owns (a deleted one is published again).
import type { LinodeClient } from "../../linode/index.ts";
import { Controller, type ControllerOptions } from "../../runtime/controller.ts";
import type { KindDescriptor } from "../../runtime/managed.ts";
import { ownedSecretsWatch, SECRETS_SOURCE, type CachedSecret } from "../../runtime/owned-secrets.ts";
import type { ReconcilerDeps } from "../../runtime/reconciler.ts";
import type { Logger } from "../../runtime/logger.ts";
import type { OperatorMetrics } from "../../metrics/operator-metrics.ts";
import { DatabaseListCache } from "./database-cache.ts";
import { ManagedDatabaseExternal } from "./external.ts";
import { managedDatabaseSpecSchema, type ManagedDatabaseSpec, type ManagedDatabaseStatus } from "./schema.ts";

export const managedDatabaseType = { group: "linode.operator.dev", version: "v1alpha1", plural: "manageddatabases", kind: "ManagedDatabase" };

export interface ManagedDatabaseControllerDeps extends ReconcilerDeps {
  linode: LinodeClient;
  log: Logger;
  metrics?: OperatorMetrics;
  poll?: { pendingMillis?: number; readyMillis?: number };
}

export function managedDatabaseController(deps: ManagedDatabaseControllerDeps, opts: ControllerOptions): Controller<ManagedDatabaseSpec, ManagedDatabaseStatus> {
  const poll = { pendingMillis: deps.poll?.pendingMillis ?? 5_000, readyMillis: deps.poll?.readyMillis ?? 5 * 60_000 };
  const holder: { controller?: Controller<ManagedDatabaseSpec, ManagedDatabaseStatus> } = {};
  const external = new ManagedDatabaseExternal({
    linode: deps.linode, kube: deps.kube, events: deps.events, type: managedDatabaseType, poll,
    cache: new DatabaseListCache(deps.linode),
    cachedSecret: (ns, name) => holder.controller?.getSecondary(SECRETS_SOURCE, `${ns}/${name}`) as CachedSecret | undefined,
  });
  const kind: KindDescriptor<ManagedDatabaseSpec, ManagedDatabaseStatus> = {
    type: managedDatabaseType,
    parseSpec: (raw) => managedDatabaseSpecSchema.parse(raw),
    policies: (spec) => ({ deletion: spec.deletionPolicy, management: spec.managementPolicy }),
    external,
    poll,
  };
  const controller = new Controller(kind, deps, opts).watches(ownedSecretsWatch(deps.kube, managedDatabaseType));
  holder.controller = controller;
  return controller;
}
