// The Kubernetes side of an object, read as the person running the command (their kubeconfig,
// their rights): the object, its latest Events, the keys of its connection Secret and the
// token its credentials Secret holds. Secret values never leave this file except that token,
// which goes to the Linode client only.
import { z } from "zod";
import { isNotFound, errorChain, KubeApiError } from "../kube/errors.ts";
import { eventsType, type EventObject, type KubeApi, type KubeObject, type ResourceType } from "../kube/types.ts";
import { conditionSchema, type Condition } from "../runtime/condition-schema.ts";

const refSchema = z.object({ name: z.string().min(1), key: z.string().min(1).default("token") });

/** What this command reads of an object of the kinds: tolerant, as the object may be of any version of the operator. */
const objectSchema = z.object({
  metadata: z.object({
    name: z.string(), namespace: z.string().optional(), uid: z.string().optional(), generation: z.number().optional(),
    creationTimestamp: z.string().optional(), deletionTimestamp: z.string().optional(),
    annotations: z.record(z.string(), z.string()).optional(),
    labels: z.record(z.string(), z.string()).optional().catch(undefined),
  }),
  spec: z.object({
    engine: z.string().optional(),
    credentialsRef: refSchema.optional().catch(undefined),
    connectionSecret: z.object({ name: z.string().optional() }).optional().catch(undefined),
  }).loose().optional().catch(undefined),
  status: z.object({
    conditions: z.array(z.unknown()).optional().catch(undefined),
    externalId: z.string().optional().catch(undefined),
    connectionSecretName: z.string().optional().catch(undefined),
    account: z.object({ credentialsRef: refSchema.optional().catch(undefined) }).optional().catch(undefined),
  }).loose().optional().catch(undefined),
});

export type StatusObject = z.infer<typeof objectSchema> & { conditions: Condition[] };

/** The object as this command reads it; conditions that do not parse are left out, not fatal. */
export function readObject(raw: unknown): StatusObject {
  const o = objectSchema.parse(raw);
  const conditions = (o.status?.conditions ?? []).flatMap((c) => {
    const parsed = conditionSchema.safeParse(c);
    return parsed.success ? [parsed.data] : [];
  });
  return { ...o, conditions };
}

export interface EventLine { type: string; reason: string; note: string; count: number; last: string | undefined; from: string }

/** The latest `limit` Events about the object (by uid), oldest first, as kubectl describe lists them. */
export async function latestEvents(kube: KubeApi, namespace: string, uid: string | undefined, limit: number): Promise<EventLine[] | { error: string }> {
  if (uid === undefined || limit === 0) return [];
  try {
    const items: EventObject[] = [];
    let continueToken: string | undefined;
    do {
      const page = await kube.list<EventObject>(eventsType, { namespace, fieldSelector: `regarding.uid=${uid}`, limit: 500, ...(continueToken !== undefined ? { continueToken } : {}) });
      items.push(...page.items);
      continueToken = page.continueToken;
    } while (continueToken !== undefined);
    const lines = items.map((e) => ({
      type: e.type ?? "", reason: e.reason ?? "", note: e.note ?? "", count: e.series?.count ?? e.deprecatedCount ?? 1,
      last: timeOf(e.series?.lastObservedTime ?? e.eventTime ?? e.deprecatedLastTimestamp ?? e.metadata.creationTimestamp),
      from: e.reportingController ?? "",
    }));
    const at = (l: EventLine): number => (l.last !== undefined ? Date.parse(l.last) : 0);
    return lines.sort((a, b) => at(a) - at(b)).slice(-limit);
  } catch (err) {
    return { error: errorChain(err) };
  }
}

const timeOf = (t: string | Date | null | undefined): string | undefined => (t === null || t === undefined ? undefined : new Date(t).toISOString());

export type SecretKeys = { name: string; keys: string[] } | { name: string; missing: true } | { name: string; error: string };

/** The keys of a Secret, never its values. */
export async function secretKeys(kube: KubeApi, namespace: string, name: string): Promise<SecretKeys> {
  try {
    const secret = await kube.getSecret({ namespace, name });
    return { name, keys: Object.keys(secret.data ?? {}).sort() };
  } catch (err) {
    if (isNotFound(err)) return { name, missing: true };
    return { name, error: refusal(err) };
  }
}

/** Where the cloud side's token comes from (never the token itself in anything printed). */
export interface TokenChoice {
  token?: { value: string; from: string };
  /** Why the Secret's token is not the one used, when the object names one. */
  note?: string;
}

/**
 * The token to read the cloud object with: the Secret the operator recorded the account by (or
 * the one the spec names), where the person may read it; else LINODE_TOKEN.
 */
export async function chooseToken(kube: KubeApi, obj: StatusObject, env: NodeJS.ProcessEnv): Promise<TokenChoice> {
  const namespace = obj.metadata.namespace ?? "";
  const ref = obj.status?.account?.credentialsRef ?? obj.spec?.credentialsRef;
  const fromEnv = env.LINODE_TOKEN !== undefined && env.LINODE_TOKEN !== "" ? { value: env.LINODE_TOKEN, from: "LINODE_TOKEN" } : undefined;
  if (ref === undefined) return fromEnv !== undefined ? { token: fromEnv } : {};
  let why: string;
  try {
    const secret = await kube.getSecret({ namespace, name: ref.name });
    const encoded = secret.data?.[ref.key];
    const value = encoded !== undefined ? Buffer.from(encoded, "base64").toString("utf8").trim() : "";
    if (value !== "") return { token: { value, from: `Secret ${ref.name}, key ${ref.key}` } };
    why = `the credentials Secret ${ref.name} has no ${ref.key} key`;
  } catch (err) {
    why = isNotFound(err) ? `the credentials Secret ${ref.name} does not exist` : `the credentials Secret ${ref.name} cannot be read: ${refusal(err)}`;
  }
  return fromEnv !== undefined ? { token: fromEnv, note: `${why}; LINODE_TOKEN used instead (the object lives in the Secret's account, which may not be LINODE_TOKEN's)` } : { note: why };
}

function refusal(err: unknown): string {
  if (err instanceof KubeApiError && err.code === 403) return "forbidden (you may not read Secrets in this namespace)";
  return errorChain(err);
}

/** Every object of `type` in the namespace (or all), page by page. */
export async function listAll(kube: KubeApi, type: ResourceType, namespace: string | undefined): Promise<KubeObject[]> {
  const items: KubeObject[] = [];
  let continueToken: string | undefined;
  do {
    const page = await kube.list(type, { limit: 500, ...(namespace !== undefined ? { namespace } : {}), ...(continueToken !== undefined ? { continueToken } : {}) });
    items.push(...page.items);
    continueToken = page.continueToken;
  } while (continueToken !== undefined);
  return items;
}
