// Hostile API answers through the whole operator, not only the client's parser
// (test/linode/hostile-answers.http.test.ts): every answer of the Linode API emulator gets every
// hostile key (Object.prototype's names, and `__proto__` with an object) at every object node,
// kept parseable, so that what the schemas keep (engine parameters, the parameter catalogue,
// members) reaches the kinds' code. A database with engine parameters and a templated
// connection Secret, and a NodeBalancer, converge as they would without them; the Secret holds
// the database's own values; nothing pollutes, escapes or is counted as unexpected.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { secretsType } from "../../src/kube/types.ts";
import { LinodeClient } from "../../src/linode/index.ts";
import { managedDatabaseType } from "../../src/resources/managed-database/index.ts";
import { nodeBalancerType } from "../../src/resources/node-balancer/index.ts";
import type { ManagedObject } from "../../src/runtime/managed.ts";
import { HOSTILE_KEYS, prototypeWatch } from "../harness/hostile-input.ts";
import { MEMORY_TOKEN, startMemoryOperatorEnv, type MemoryOperatorEnv } from "../harness/memory-operator-env.ts";

const NS = "team-a";
const OTHER = "team-b";

/** The answer with every hostile key at every object node (arrays: every item). */
function withHostileKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withHostileKeys);
  if (v === null || typeof v !== "object") return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) Object.defineProperty(out, k, { value: withHostileKeys(x), enumerable: true, writable: true, configurable: true });
  for (const k of HOSTILE_KEYS) {
    if (Object.hasOwn(out, k)) continue;
    // Strings, so maps of strings still parse; `__proto__` with an object, as JSON.parse makes it an own key.
    const value = k === "__proto__" ? { polluted: "answer" } : "hostile";
    Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

async function until<T>(what: string, fn: () => T | undefined | false, millis = 60_000): Promise<T> {
  const end = Date.now() + millis;
  for (;;) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("hostile keys in every answer of the Linode API, through the operator", () => {
  let env: MemoryOperatorEnv;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => { unhandled.push(reason); };
  const prototype = prototypeWatch();
  const answered: string[] = [];

  beforeAll(async () => {
    process.on("unhandledRejection", onUnhandled);
    env = await startMemoryOperatorEnv({
      namespaces: [NS, OTHER], platform: "current",
      rewriteAnswers: (method, path, body) => { answered.push(`${method} ${path}`); return JSON.stringify(withHostileKeys(body)); },
    });
  });
  afterAll(async () => {
    process.off("unhandledRejection", onUnhandled);
    await env.stop();
  });

  it("a database with engine parameters and a templated Secret, and a NodeBalancer, converge in two namespaces; the Secret is the database's own; nothing pollutes or escapes", async () => {
    const ready = (t: typeof managedDatabaseType, namespace: string, name: string): Promise<ManagedObject> => until(`${namespace}/${name} Ready`, () => {
      const o = env.kube.peek(t, { namespace, name }) as ManagedObject | undefined;
      const c = (type: string) => o?.status?.conditions?.find((x) => x.type === type);
      return c("Ready")?.status === "True" && c("Synced")?.status === "True" ? o : undefined;
    });
    for (const namespace of [NS, OTHER]) {
      await env.kube.createCustom(managedDatabaseType, namespace, {
        apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: "orders" },
        spec: {
          engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1", engineConfig: { binlog_retention_period: 600, mysql: { connect_timeout: 20 } },
          connectionSecret: { extraData: { jdbc: "jdbc:mysql://{{ .host }}:{{ .port }}/{{ .database }}" }, labels: { team: namespace } },
        },
      });
      await env.kube.createCustom(nodeBalancerType, namespace, {
        apiVersion: "linode.operator.dev/v1alpha1", kind: "NodeBalancer", metadata: { name: "web" },
        spec: { region: "us-east", configs: [{ port: 80, nodes: [{ label: "web-1", address: "192.168.128.5:80" }] }] },
      });
    }
    // Then a change, so an update and the answers after it are read (and compared) too.
    await ready(managedDatabaseType, NS, "orders");
    await env.kube.mergePatchCustom(managedDatabaseType, { namespace: NS, name: "orders" }, { spec: { allowList: ["203.0.113.9"], engineConfig: { mysql: { connect_timeout: 30 } } } });
    const seen = new LinodeClient({ token: MEMORY_TOKEN, baseUrl: env.emulator.url, rateLimit: false });
    try {
      await until("the change applied", () => (env.kube.peek(managedDatabaseType, { namespace: NS, name: "orders" }) as ManagedObject | undefined)?.status?.conditions?.some((c) => c.type === "Synced" && c.status === "True" && c.observedGeneration === 2));
      for (const namespace of [NS, OTHER]) {
        const db = await ready(managedDatabaseType, namespace, "orders");
        await ready(nodeBalancerType, namespace, "web");
        // What the operator published is what the API (without the proxy) says of the database.
        const truth = await seen.databases.mysql.get(Number(db.status?.id));
        const secret = env.kube.peek(secretsType, { namespace, name: "orders-connection" });
        const data = Object.fromEntries(Object.entries((secret?.data ?? {}) as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]));
        expect(data.host).toBe(truth.hosts.primary);
        expect(data.jdbc).toBe(`jdbc:mysql://${truth.hosts.primary}:${String(truth.port)}/${data.database ?? ""}`);
        expect(Object.values(data).join("\n")).not.toMatch(/hostile|polluted|\[native code\]/);
        expect(truth.engineConfig).toMatchObject({ binlogRetentionPeriod: 600, mysql: { connectTimeout: namespace === NS ? 30 : 20 } });
        expect(truth.allowList).toEqual(namespace === NS ? ["203.0.113.9/32"] : []);
        // Nothing the operator read from an answer was sent back: the database has none of the keys.
        expect(JSON.stringify(truth)).not.toMatch(/hostile|polluted/);
      }
    } finally {
      await seen.close();
    }
    expect(prototype.changes()).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(unhandled).toEqual([]);
    const unexpected = (await env.metrics.unexpectedErrors.get()).values.filter((v) => v.value > 0);
    expect(unexpected, "linode_operator_unexpected_errors_total").toEqual([]);
    const routes = new Set(answered.map((a) => a.replace(/\/\d+/g, "/{id}")));
    console.log(`hostile-answers (operator): ${String(env.proxy?.rewritten() ?? 0)} answers, each with ${String(HOSTILE_KEYS.length)} hostile keys at every object node, on ${String(routes.size)} routes: ${[...routes].sort().join(", ")}`);
    // A floor: the operator read through the proxy on the routes a database and a NodeBalancer need.
    expect(routes.size).toBeGreaterThanOrEqual(10);
  });
});
