// What `status` reports, gathered once and then printed as text or JSON: one object in full,
// or the list of objects that are not Ready.
import { DRAIN_LABEL, SHARD_LABEL } from "../runtime/sharding/assignment.ts";
import { isNotFound, errorChain } from "../kube/errors.ts";
import type { KubeApi } from "../kube/types.ts";
import { resourceTypeOf, type KindDefinition } from "../runtime/kind-definition.ts";
import { conditionReasonMeanings } from "../runtime/reasons.ts";
import { sharedReasonMeanings } from "../resources/shared/reasons.ts";
import { ageOf } from "./age.ts";
import { readCloudSide, type CloudSide } from "./cloud-side.ts";
import { chooseToken, latestEvents, listAll, readObject, secretKeys, type EventLine, type SecretKeys } from "./kube-side.ts";
import { nextStep, type NextStep } from "./next-pass.ts";

export interface ConditionLine { type: string; status: string; reason: string; message?: string; lastTransitionTime: string; age: string }

export interface ObjectReport {
  kind: string;
  namespace: string;
  name: string;
  generation?: number;
  age: string;
  deleting: boolean;
  conditions: ConditionLine[];
  events: (EventLine & { age: string })[] | { error: string };
  cloud: CloudSide;
  /** The cloud side's token note (a credentials Secret that could not be used). */
  tokenNote?: string;
  connectionSecret?: SecretKeys;
  next: NextStep;
  /** With shards (--shards): the replica whose shard owns it, and whether it is moving to another. */
  shard?: { name: string; draining: boolean };
}

export interface GatherOptions {
  kube: KubeApi;
  def: KindDefinition;
  namespace: string;
  name: string;
  events: number;
  env: NodeJS.ProcessEnv;
  now?: () => number;
}

/** Everything `status <kind>/<name>` shows; undefined when the object does not exist. */
export async function gatherObject(o: GatherOptions): Promise<ObjectReport | undefined> {
  let raw: unknown;
  try {
    raw = await o.kube.getCustom(resourceTypeOf(o.def), { namespace: o.namespace, name: o.name });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
  const obj = readObject(raw);
  const secretName = connectionSecretName(o.def, obj);
  const [events, connectionSecret, cloud] = await Promise.all([
    latestEvents(o.kube, o.namespace, obj.metadata.uid, o.events),
    secretName !== undefined ? secretKeys(o.kube, o.namespace, secretName) : undefined,
    cloudSide(o, obj),
  ]);
  const now = (o.now ?? Date.now)();
  return {
    kind: o.def.kind, namespace: o.namespace, name: o.name,
    ...(obj.metadata.generation !== undefined ? { generation: obj.metadata.generation } : {}),
    age: ageOf(obj.metadata.creationTimestamp, now),
    deleting: obj.metadata.deletionTimestamp !== undefined,
    conditions: obj.conditions.map((c) => ({
      type: c.type, status: c.status, reason: c.reason, ...(c.message !== undefined ? { message: c.message } : {}),
      lastTransitionTime: c.lastTransitionTime, age: ageOf(c.lastTransitionTime, now),
    })),
    events: Array.isArray(events) ? events.map((e) => ({ ...e, age: ageOf(e.last, now) })) : events,
    ...cloud,
    ...(connectionSecret !== undefined ? { connectionSecret } : {}),
    next: nextStep({ kind: o.def.kind, metadata: obj.metadata, conditions: obj.conditions, meanings: meaningsOf(o.def), now }),
    ...shardOf(obj.metadata.labels),
  };
}

function shardOf(labels: Record<string, string> | undefined): { shard?: { name: string; draining: boolean } } {
  const name = labels?.[SHARD_LABEL];
  return name === undefined || name === "" ? {} : { shard: { name, draining: labels?.[DRAIN_LABEL] !== undefined } };
}

const meaningsOf = (def: KindDefinition): Record<string, string> => ({ ...conditionReasonMeanings, ...sharedReasonMeanings, ...def.reasons });

/** The connection Secret: the one the operator recorded, else the one the spec names (ManagedDatabase's default: <name>-connection). */
function connectionSecretName(def: KindDefinition, obj: ReturnType<typeof readObject>): string | undefined {
  const recorded = obj.status?.connectionSecretName;
  if (recorded !== undefined) return recorded;
  if (def.kind !== "ManagedDatabase") return undefined;
  return obj.spec?.connectionSecret?.name ?? `${obj.metadata.name}-connection`;
}

async function cloudSide(o: GatherOptions, obj: ReturnType<typeof readObject>): Promise<{ cloud: CloudSide; tokenNote?: string }> {
  const externalId = obj.status?.externalId;
  // Nothing recorded, nothing to read: no token is looked for.
  if (externalId === undefined) return { cloud: { state: "none", why: "the operator has recorded no cloud object for it yet (status.externalId)" } };
  const choice = await chooseToken(o.kube, obj, o.env);
  const note = choice.note !== undefined ? { tokenNote: choice.note } : {};
  if (choice.token === undefined) {
    return { cloud: { state: "needsToken", why: `reading ${o.def.kind} ${externalId} from the Linode API needs a token: set LINODE_TOKEN${choice.note !== undefined ? "" : ", or give the object a spec.credentialsRef you may read"}` }, ...note };
  }
  const cloud = await readCloudSide({ kind: o.def.kind, externalId, ...(obj.spec?.engine !== undefined ? { engine: obj.spec.engine } : {}) }, choice.token, o.env.LINODE_API_URL);
  return { cloud, ...note };
}

export interface NotReadyLine { kind: string; namespace: string; name: string; reason: string; message: string; age: string }

export interface NotReadyReport {
  notReady: NotReadyLine[];
  /** Kinds that could not be listed (CRD not installed, or not allowed), with why. */
  unlisted: { kind: string; why: string }[];
}

/** Every object of the kinds, in the namespace (or all: undefined), whose Ready condition is not True. */
export async function gatherNotReady(kube: KubeApi, defs: readonly KindDefinition[], namespace: string | undefined, now: number = Date.now()): Promise<NotReadyReport> {
  const report: NotReadyReport = { notReady: [], unlisted: [] };
  const lists = await Promise.all(defs.map(async (def) => {
    try {
      return { def, items: await listAll(kube, resourceTypeOf(def), namespace) };
    } catch (err) {
      report.unlisted.push({ kind: def.kind, why: isNotFound(err) ? "its CRD is not installed" : errorChain(err) });
      return { def, items: [] };
    }
  }));
  for (const { def, items } of lists) {
    for (const raw of items) {
      const obj = readObject(raw);
      const ready = obj.conditions.find((c) => c.type === "Ready");
      if (ready?.status === "True") continue;
      // Synced=False names the cause (Ready may only say Unavailable, or be absent: an invalid spec sets Synced alone).
      const synced = obj.conditions.find((c) => c.type === "Synced");
      const why = synced?.status === "False" ? synced : ready;
      report.notReady.push({
        kind: def.kind, namespace: obj.metadata.namespace ?? "", name: obj.metadata.name,
        reason: why?.reason ?? "NotReported",
        message: why?.message ?? (why === undefined ? "the operator has not reported on it yet" : ""),
        age: ageOf(why?.lastTransitionTime ?? obj.metadata.creationTimestamp, now),
      });
    }
  }
  report.notReady.sort((a, b) => a.namespace.localeCompare(b.namespace) || a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name));
  return report;
}
