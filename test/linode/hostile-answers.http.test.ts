// Hostile answers to every parser the Linode client has: every method of the client (found on
// its API objects, not listed) is called through a loopback server that answers with real
// answers mutated. The real answers are the recorded ones (test/fixtures/recorded, captured
// from the real API) where a route has one, else the emulator's. Mutations: every hostile key
// (the prototype keys and Object.prototype's names) injected at every object node, every value
// replaced by wrong types, huge strings, nested objects with prototype keys and very deep
// nesting, and bodies that are no JSON at all. Each answer goes through the client's real
// pipeline (HTTP, JSON.parse, zod, camelize): every call returns a parsed value made of plain
// objects and arrays, or a LinodeError, and Object.prototype gains nothing.
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LinodeClient, LinodeError } from "../../src/linode/index.ts";
import { HOSTILE_KEYS, prototypeWatch } from "../harness/hostile-input.ts";
import { eventually, label, makeClient, startTestEmulator, TOKEN, type Emulator } from "./helpers.ts";

type Json = Record<string, unknown>;

interface Recorded { method: string; template: string; status: number; responseBody: unknown }

const DB = /^\/databases\/(?:mysql|postgresql)\/instances/;
const normalize = (path: string): string => path.replace(DB, "/databases/{engine}/instances");

/** The recorded 2xx answers, by "METHOD template" (the largest of each: it has the most to mutate). */
function recordedAnswers(): Map<string, { pattern: RegExp; body: unknown }> {
  const dir = join(import.meta.dirname, "../fixtures/recorded");
  const out = new Map<string, { pattern: RegExp; body: unknown }>();
  for (const f of readdirSync(dir).filter((x) => x.endsWith(".json")).sort()) {
    for (const r of JSON.parse(readFileSync(join(dir, f), "utf8")) as Recorded[]) {
      if (r.status < 200 || r.status >= 300) continue;
      const template = normalize(r.template);
      const key = `${r.method} ${template}`;
      const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+")}$`);
      const was = out.get(key);
      if (was === undefined || JSON.stringify(r.responseBody).length > JSON.stringify(was.body).length) out.set(key, { pattern, body: r.responseBody });
    }
  }
  return out;
}

interface Answer { status: number; text: string }

/**
 * A loopback server before the emulator. Capturing, it answers each request with the recorded
 * answer of its route, or the emulator's, and remembers it as the base; otherwise it answers
 * with whatever `next` holds.
 */
async function startAnswerServer(emulator: Emulator) {
  const recorded = recordedAnswers();
  const emulatorOrigin = new URL(emulator.url).origin;
  let next: Answer | undefined;
  let base: { route: string; body: unknown; source: string } | undefined;
  const requests: string[] = [];
  const forward = async (req: IncomingMessage, body: string): Promise<Answer> => {
    const headers: Record<string, string> = {};
    for (const h of ["authorization", "content-type", "x-filter", "accept"]) if (typeof req.headers[h] === "string") headers[h] = req.headers[h];
    const res = await fetch(`${emulatorOrigin}${req.url ?? ""}`, { method: req.method ?? "GET", headers, ...(body !== "" ? { body } : {}) });
    return { status: res.status, text: await res.text() };
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.setEncoding("utf8").on("data", (c: string) => { body += c; });
    req.on("end", () => {
      void (async () => {
        const path = normalize(new URL(req.url ?? "/", "http://x").pathname.replace(/^\/v4/, ""));
        const route = `${req.method ?? "?"} ${path}`;
        requests.push(route);
        let answer = next;
        if (answer === undefined) {
          const hit = [...recorded].find(([k, r]) => k.startsWith(`${req.method ?? "?"} `) && r.pattern.test(path));
          if (hit !== undefined) {
            base = { route, body: hit[1].body, source: `recorded ${hit[0]}` };
            answer = { status: 200, text: JSON.stringify(hit[1].body) };
          } else {
            answer = await forward(req, body);
            if (answer.status < 300) base = { route, body: JSON.parse(answer.text === "" ? "{}" : answer.text) as unknown, source: "emulator" };
          }
        }
        res.writeHead(answer.status, { "content-type": "application/json" });
        res.end(answer.text);
      })().catch((err: unknown) => {
        res.writeHead(599);
        res.end(String(err));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${String(port)}/v4`,
    requests,
    /** Answers every request with `a` from now on (undefined: capture again). */
    answerWith(a: Answer | undefined): void { next = a; },
    takeBase(): { route: string; body: unknown; source: string } | undefined { const b = base; base = undefined; return b; },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => { resolve(); }); }),
  };
}

/** Values a hostile answer puts where the schema expects something else. */
const DEEP = 50_000;
const REPLACEMENTS: { name: string; text: string }[] = [
  { name: "huge-string", text: JSON.stringify("x".repeat(64 * 1024)) },
  { name: "nested-prototype-keys", text: '{"__proto__": {"polluted": "answer"}, "constructor": {"prototype": {"polluted": "answer"}}, "toString": "x"}' },
  { name: "null", text: "null" },
  { name: "negative", text: "-1" },
  { name: "huge-number", text: "1e308" },
  { name: "unsafe-integer", text: "9007199254740993" },
  { name: "true", text: "true" },
  { name: "empty-array", text: "[]" },
  { name: "array-of-hostile-objects", text: '[{"__proto__": {"polluted": "answer"}}, {"constructor": {"prototype": {"polluted": "answer"}}}]' },
  { name: "empty-string", text: '""' },
  { name: "key-name", text: '"__proto__"' },
  // Deeper than any recursion over it can go: JSON.parse takes it, a recursive walk does not.
  { name: "deep", text: `${'{"a":'.repeat(DEEP)}1${"}".repeat(DEEP)}` },
];

/** Whole bodies that are not the answer at all. */
const RAW_BODIES: { name: string; text: string }[] = [
  { name: "not-json", text: "<html>a proxy's error page</html>" },
  { name: "empty", text: "" },
  { name: "null", text: "null" },
  { name: "array", text: "[]" },
  { name: "number", text: "1e999" },
  { name: "truncated", text: '{"data": [{"id": 1' },
  { name: "prototype-only", text: '{"__proto__": {"polluted": "answer"}}' },
  { name: "deep-array", text: `${"[".repeat(DEEP)}${"]".repeat(DEEP)}` },
];

const PLACEHOLDER = "\u0000hostile\u0000";

/** Every node of a JSON value (arrays: their first item only), as key paths from the root. */
function nodes(v: unknown, path: (string | number)[] = []): { path: (string | number)[]; value: unknown }[] {
  const out = [{ path, value: v }];
  if (Array.isArray(v)) { if (v.length > 0) out.push(...nodes(v[0], [...path, 0])); }
  else if (v !== null && typeof v === "object") for (const [k, x] of Object.entries(v)) out.push(...nodes(x, [...path, k]));
  return out;
}

/** `base` with the value at `path` replaced by raw JSON text (own keys kept, `__proto__` included). */
function withAt(base: unknown, path: (string | number)[], text: string, inject?: string): string {
  const copy = JSON.parse(JSON.stringify(base)) as unknown;
  if (path.length === 0 && inject === undefined) return text;
  let parent = copy as Json | unknown[];
  for (const p of (inject === undefined ? path.slice(0, -1) : path)) parent = (parent as Json)[p] as Json;
  const key = inject ?? path.at(-1) ?? "";
  Object.defineProperty(parent, key, { value: PLACEHOLDER, enumerable: true, writable: true, configurable: true });
  return JSON.stringify(copy).replace(JSON.stringify(PLACEHOLDER), text);
}

/** The mutations of one base answer: hostile keys at every object node, replacements at every node (3 each, rotating), whole bodies. */
function mutations(base: unknown): { name: string; text: string }[] {
  const out: { name: string; text: string }[] = [];
  const all = nodes(base);
  let rot = 0;
  for (const n of all) {
    const at = n.path.join(".") || "(root)";
    if (n.value !== null && typeof n.value === "object" && !Array.isArray(n.value)) {
      for (const k of HOSTILE_KEYS) {
        const r = REPLACEMENTS[rot++ % REPLACEMENTS.length] ?? REPLACEMENTS[0];
        if (r !== undefined) out.push({ name: `${at} + key ${k} = ${r.name}`, text: withAt(base, n.path, r.text, k) });
      }
    }
    if (n.path.length === 0) continue;
    for (let j = 0; j < 3; j++) {
      const r = REPLACEMENTS[rot++ % REPLACEMENTS.length] ?? REPLACEMENTS[0];
      if (r !== undefined) out.push({ name: `${at} = ${r.name}`, text: withAt(base, n.path, r.text) });
    }
  }
  for (const r of RAW_BODIES) out.push({ name: `body ${r.name}`, text: r.text });
  return out;
}

/** Where a parsed value has an object that is not a plain object or array (a prototype from the answer), or an accessor. */
function notPlain(v: unknown, path = "(root)", seen = new Set<unknown>()): string | undefined {
  if (v === null || typeof v !== "object" || seen.has(v)) return undefined;
  seen.add(v);
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== Array.prototype && proto !== null) return `${path}: prototype ${JSON.stringify(proto)}`;
  for (const [k, d] of Object.entries(Object.getOwnPropertyDescriptors(v))) {
    if (d.get !== undefined || d.set !== undefined) return `${path}.${k}: an accessor`;
    const deeper = notPlain(d.value, `${path}.${k}`, seen);
    if (deeper !== undefined) return deeper;
  }
  return undefined;
}

/**
 * How to call a client method by its parameters' names: the ids of objects made in the emulator
 * first, by name (`instanceId`), or for one method's parameter (`databases.mysql.restoreBackup(backupId)`).
 */
type Ids = Record<string, unknown>;

function parameterNames(fn: (...args: unknown[]) => unknown): string[] {
  const m = /^[^(]*\(([^)]*)\)/.exec(fn.toString());
  return (m?.[1] ?? "").split(",").map((p) => p.replace(/=.*$/s, "").trim()).filter((p) => p !== "");
}

interface Method { name: string; call: () => Promise<unknown> }

/** Every request method of the client's API objects, with arguments by parameter name. */
function clientMethods(client: LinodeClient, ids: Ids): { methods: Method[]; unknownParameters: string[] } {
  const apis: [string, object][] = [["databases", client.databases], ["databases.mysql", client.databases.mysql], ["nodeBalancers", client.nodeBalancers], ["firewalls", client.firewalls], ["vpcs", client.vpcs]];
  const methods: Method[] = [];
  const unknownParameters: string[] = [];
  for (const [apiName, api] of apis) {
    const proto = Object.getPrototypeOf(api) as Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(proto)) {
      const fn = proto[name];
      if (name === "constructor" || typeof fn !== "function") continue;
      const params = parameterNames(fn as (...args: unknown[]) => unknown);
      const args = params.map((p) => {
        if (p === "opts") return { retry: { maxAttempts: 1 } };
        const own = ids[`${apiName}.${name}(${p})`];
        if (own !== undefined) return own;
        if (!(p in ids)) unknownParameters.push(`${apiName}.${name}(${p})`);
        return ids[p];
      });
      methods.push({ name: `${apiName}.${name}`, call: () => (fn as (...a: unknown[]) => unknown).apply(api, args) as Promise<unknown> });
    }
  }
  return { methods, unknownParameters };
}

describe("hostile answers to every parser of the Linode client", () => {
  let emulator: Emulator;
  let server: Awaited<ReturnType<typeof startAnswerServer>>;
  let client: LinodeClient;
  let ids: Ids;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => { unhandled.push(reason); };

  beforeAll(async () => {
    process.on("unhandledRejection", onUnhandled);
    emulator = await startTestEmulator({ config: { statsDelaySeconds: 0 } });
    // Objects of every kind the routes name, made as a user would, so the emulator can answer the routes nobody recorded.
    const { client: setup } = makeClient(emulator, { rateLimit: false });
    const db = await setup.databases.mysql.create({ label: label("hostile-db"), region: "us-east", type: "g6-nanode-1", version: "8" });
    await eventually(async () => ((await setup.databases.mysql.get(db.id)).status === "active" ? true : undefined));
    // Two backups: deleteBackup takes one, restoreBackup the other (the emulator takes one backup at a time).
    const backups: { id: number }[] = [];
    for (const l of ["hostile1", "hostile2"]) {
      await setup.databases.mysql.createSnapshot(db.id, { label: l });
      backups.push(await eventually(async () => (await setup.databases.mysql.listAllBackups(db.id)).find((b) => b.label === l)));
      await eventually(async () => ((await setup.databases.mysql.get(db.id)).status === "active" ? true : undefined));
    }
    const [backup, restorable] = backups;
    if (backup === undefined || restorable === undefined) throw new Error("no backups");
    const nb = await setup.nodeBalancers.create({ region: "us-east", label: label("hostile-nb"), configs: [{ port: 80, nodes: [{ label: "web-1", address: "192.168.128.5:80" }] }] });
    const config = (await setup.nodeBalancers.listAllConfigs(nb.id))[0];
    const node = config === undefined ? undefined : (await setup.nodeBalancers.listAllNodes(nb.id, config.id))[0];
    // A second NodeBalancer, with no firewall yet, for the device the client's createDevice makes.
    const bare = await setup.nodeBalancers.create({ region: "us-east", label: label("hostile-nb") });
    // A NodeBalancer with its backends in a VPC (made through the API, as a user would), for its VPC configs.
    const made = await fetch(`${emulator.url}/vpcs`, { method: "POST", headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" }, body: JSON.stringify({ label: label("hostile-vpc"), region: "us-east", subnets: [{ label: "s", ipv4: "10.0.0.0/24" }] }) });
    const subnetId = ((await made.json()) as { subnets: { id: number }[] }).subnets[0]?.id ?? 0;
    const inVpc = await setup.nodeBalancers.create({ region: "us-east", label: label("hostile-nb"), vpcs: [{ subnetId }] });
    const vpcConfig = (await setup.nodeBalancers.listAllVpcConfigs(inVpc.id))[0];
    const firewallId = 4242;
    const device = await setup.firewalls.createDevice(firewallId, { id: nb.id, type: "nodebalancer" });
    await setup.close();
    ids = {
      instanceId: db.id, backupId: backup.id, nodeBalancerId: nb.id, configId: config?.id, nodeId: node?.id, firewallId, deviceId: device.id,
      engineId: "mysql/8", typeId: "g6-nanode-1", label: db.label, engine: "mysql",
      "databases.mysql.restoreBackup(backupId)": restorable.id,
      vpcConfigId: vpcConfig?.id, "nodeBalancers.getVpcConfig(nodeBalancerId)": inVpc.id, "nodeBalancers.listAllVpcConfigs(nodeBalancerId)": inVpc.id,
      // Request bodies: the answer is what is tested, not the request; where the emulator answers, a request it takes.
      req: {},
      "firewalls.createDevice(req)": { id: bare.id, type: "nodebalancer" },
      "nodeBalancers.updateFirewalls(req)": { firewallIds: [firewallId] },
    };
    server = await startAnswerServer(emulator);
    client = new LinodeClient({ token: TOKEN, baseUrl: server.url, rateLimit: false, retry: { maxAttempts: 1 } });
  });
  afterAll(async () => {
    process.off("unhandledRejection", onUnhandled);
    await client.close();
    await server.close();
    await emulator.close();
  });

  it("every method: each mutated answer is a parsed value of plain objects or a LinodeError, and Object.prototype gains nothing", async () => {
    const prototype = prototypeWatch();
    const { methods, unknownParameters } = clientMethods(client, ids);
    expect(unknownParameters, "client methods whose parameters this test cannot fill: give them an id").toEqual([]);
    // A floor: the client's API objects have about fifty request methods.
    expect(methods.length).toBeGreaterThanOrEqual(45);
    const failures: string[] = [];
    const outcomes = new Map<string, number>();
    const routes = new Set<string>();
    let answers = 0;
    const skipped: string[] = [];
    const call = async (m: Method): Promise<{ ok: true; v: unknown } | { ok: false; e: unknown }> => {
      try {
        return { ok: true, v: await m.call() };
      } catch (e) {
        return { ok: false, e };
      }
    };
    for (const m of methods) {
      server.answerWith(undefined);
      const before = server.requests.length;
      const first = await call(m);
      const base = server.takeBase();
      // Not a request (engine() hands out an engine's API): nothing was asked of the server.
      if (server.requests.length === before && first.ok) { skipped.push(m.name); continue; }
      if (!first.ok || base === undefined) {
        failures.push(`${m.name}: the unmutated answer failed (the test's set-up is wrong): ${first.ok ? "no base" : String(first.e)}`);
        continue;
      }
      routes.add(base.route);
      for (const mut of mutations(base.body)) {
        server.answerWith({ status: 200, text: mut.text });
        answers++;
        const got = await call(m);
        let outcome: string;
        if (got.ok) {
          outcome = "parsed";
          const bad = notPlain(got.v);
          if (bad !== undefined) failures.push(`${m.name} ${mut.name}: parsed into a non-plain object at ${bad}`);
        } else if (got.e instanceof LinodeError) {
          outcome = `LinodeError ${got.e.kind}${got.e.cause instanceof RangeError ? " (a stack overflow, caught)" : ""}`;
        } else {
          outcome = "other";
          failures.push(`${m.name} ${mut.name}: threw ${got.e instanceof Error ? `${got.e.name}: ${got.e.message}` : String(got.e)}`);
        }
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
        const changed = prototype.changes();
        if (changed.length > 0) failures.push(`${m.name} ${mut.name}: ${changed.join(", ")}`);
      }
      server.answerWith(undefined);
    }
    console.log(`hostile-answers: ${String(answers)} mutated answers to ${String(methods.length - skipped.length)} client methods (${String(routes.size)} routes; not requests: ${skipped.join(", ")}): ${[...outcomes].map(([k, n]) => `${k} ${String(n)}`).join(", ")}`);
    expect(failures.slice(0, 20), `${String(failures.length)} failures`).toEqual([]);
    expect(answers).toBeGreaterThanOrEqual(5_000);
    expect(({} as Json).polluted).toBeUndefined();
    expect(prototype.changes()).toEqual([]);
    expect(unhandled).toEqual([]);
  }, 600_000);
});
