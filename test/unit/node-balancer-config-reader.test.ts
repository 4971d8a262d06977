// What ConfigReader reads, per look, under the assumption it states (a config or node change
// moves the NodeBalancer's `updated`): the calls a decision table of looks costs, against a
// counting fake of the three routes it uses.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { LinodeClient, NodeBalancer, NodeBalancerConfig, NodeBalancerNode } from "../../src/linode/index.ts";
import { ConfigReader, type ReadOptions, type Recorded } from "../../src/resources/node-balancer/configs.ts";

const config = (id: number, up = 2): NodeBalancerConfig => ({ id, port: 8000 + id, nodesStatus: { up, down: 0 } }) as unknown as NodeBalancerConfig;
const node = (configId: number, n: number): NodeBalancerNode => ({ id: configId * 10 + n, label: `n${String(n)}`, address: `192.168.0.${String(n)}:80`, status: "UP", mode: "accept", weight: 50, configId, nodebalancerId: 1 });
// Times as the API gives them (to the second, no zone), long past.
const T1 = "2026-01-01T00:00:00";
const T2 = "2026-01-01T00:05:00";
const nb = (updated: string): NodeBalancer => ({ id: 1, updated }) as unknown as NodeBalancer;

function fake() {
  const calls: string[] = [];
  // `holdNodes`: the nodes list of this config is refused, as the call budget holds one back (the pass is deferred).
  // `servedAt`: the configs list's Date header (none: the reader goes by its own clock).
  const state: { configs: NodeBalancerConfig[]; holdNodes?: number; servedAt?: number } = { configs: [config(1), config(2)] };
  const nodeBalancers = {
    listAllConfigsServed: (_id: number, opts: { routine?: boolean }) => {
      calls.push(opts.routine === true ? "configs (routine)" : "configs");
      return Promise.resolve(state.servedAt === undefined ? { configs: state.configs } : { configs: state.configs, servedAt: state.servedAt });
    },
    listAllNodes: (_id: number, c: number) => {
      if (state.holdNodes === c) return Promise.reject(new Error("held back by the call budget"));
      calls.push(`nodes ${String(c)}`);
      return Promise.resolve([node(c, 1), node(c, 2)]);
    },
    listAllFirewalls: () => { calls.push("firewalls"); return Promise.resolve([{ id: 7, label: "fw", status: "enabled" }]); },
  };
  return { linode: { nodeBalancers } as unknown as LinodeClient, calls, state };
}

const every: ReadOptions = { healthMaxAgeMillis: 0, firewallsNow: false };
const signal = new AbortController().signal;

describe("ConfigReader", () => {
  // The safety net's period is read on Date, the one thing faked here: the tests move it.
  beforeEach(() => { vi.useFakeTimers({ toFake: ["Date"] }); });
  afterEach(() => { vi.useRealTimers(); });
  it("reads everything once, then only the configs list while `updated` stands; a move reads it all again", async () => {
    const { linode, calls } = fake();
    const r = new ConfigReader(linode, 0);
    await r.read(nb(T1), signal, every);
    expect(calls.splice(0)).toEqual(["configs", "nodes 1", "nodes 2", "firewalls"]);
    for (let i = 0; i < 5; i++) await r.read(nb(T1), signal, every);
    expect(calls.splice(0)).toEqual(Array(5).fill("configs (routine)"));
    await r.read(nb(T2), signal, every);
    expect(calls.splice(0)).toEqual(["configs", "nodes 1", "nodes 2", "firewalls"]);
  });

  it("only a look for the health counts alone is routine (gives way in the paginated class); the first, a move, a change of ours are not", async () => {
    const { linode, calls } = fake();
    const r = new ConfigReader(linode, 0);
    await r.read(nb(T1), signal, every);
    await r.read(nb(T1), signal, every);
    await r.read(nb(T2), signal, every);
    r.changed(1, [1]);
    await r.read(nb(T2), signal, every);
    r.firewallsChanged(1);
    await r.read(nb(T2), signal, every);
    expect(calls.filter((c) => c.startsWith("configs"))).toEqual(["configs", "configs (routine)", "configs", "configs", "configs"]);
  });

  it("a config whose health counts moved has its nodes read again, alone", async () => {
    const { linode, calls, state } = fake();
    const r = new ConfigReader(linode, 0);
    await r.read(nb(T1), signal, every);
    calls.splice(0);
    state.configs = [config(1), config(2, 1)];
    await r.read(nb(T1), signal, every);
    expect(calls).toEqual(["configs (routine)", "nodes 2"]);
  });

  it("a config changed outside while `updated` is the one held (a list older than the change) reads every config's nodes and the firewalls again", async () => {
    const { linode, calls, state } = fake();
    const r = new ConfigReader(linode, 0);
    await r.read(nb(T1), signal, every);
    calls.splice(0);
    // Config 2's certificate changed outside, and config 1's nodes (which move no field of config 1).
    state.configs = [config(1), { ...config(2), sslFingerprint: "other" }];
    await r.read(nb(T1), signal, every);
    expect(calls.splice(0)).toEqual(["configs (routine)", "nodes 1", "nodes 2", "firewalls"]);
    // A config added or gone outside, alike.
    state.configs = [config(1)];
    await r.read(nb(T1), signal, every);
    expect(calls.splice(0)).toEqual(["configs (routine)", "nodes 1", "firewalls"]);
    // What we changed ourselves reads only its nodes; a config we removed, nothing more.
    state.configs = [config(1), config(2)];
    await r.read(nb(T1), signal, every);
    calls.splice(0);
    r.changed(1, [1, 2]);
    state.configs = [{ ...config(1), sslFingerprint: "ours" }];
    await r.read(nb(T2), signal, every);
    expect(calls.splice(0)).toEqual(["configs", "nodes 1"]);
  });

  it("our own change reads only the configs we changed; firewalls after a firewall change", async () => {
    const { linode, calls } = fake();
    const r = new ConfigReader(linode, 0);
    await r.read(nb(T1), signal, every);
    calls.splice(0);
    r.changed(1, [2]);
    await r.read(nb(T2), signal, every);
    expect(calls.splice(0)).toEqual(["configs", "nodes 2"]);
    r.firewallsChanged(1);
    await r.read(nb(T2), signal, every);
    expect(calls.splice(0)).toEqual(["configs", "firewalls"]);
  });

  it("a health window: no call at all while `updated` stands and the counts are young enough; firewalls on every look when asked", async () => {
    const { linode, calls } = fake();
    const r = new ConfigReader(linode, 0);
    const windowed: ReadOptions = { healthMaxAgeMillis: 60_000, firewallsNow: false };
    await r.read(nb(T1), signal, windowed);
    calls.splice(0);
    await r.read(nb(T1), signal, windowed);
    expect(calls.splice(0)).toEqual([]);
    await r.read(nb(T1), signal, { ...windowed, firewallsNow: true });
    expect(calls.splice(0)).toEqual(["firewalls"]);
    await r.read(nb(T2), signal, windowed);
    expect(calls.splice(0)).toEqual(["configs", "nodes 1", "nodes 2", "firewalls"]);
  });

  it("after a restart, status's record stands in while `updated` is the one it recorded: the configs list alone", async () => {
    const { linode, calls } = fake();
    const nodes = (c: number): Recorded["configs"][number]["nodes"] => [node(c, 1), node(c, 2)].map(({ configId: _c, nodebalancerId: _n, ...n }) => n);
    const recorded: Recorded = { updated: T1, configs: [{ id: 1, nodesStatus: { up: 2, down: 0 }, nodes: nodes(1) }, { id: 2, nodesStatus: { up: 1, down: 1 }, nodes: nodes(2) }], firewalls: [{ id: 7, label: "fw", status: "enabled" }] };
    const seeded = await new ConfigReader(linode, 0).read(nb(T1), signal, { ...every, recorded });
    // Config 2's counts differ from the record: its nodes are read.
    expect(calls.splice(0)).toEqual(["configs", "nodes 2"]);
    expect(seeded.configs[0]?.nodes.map((n) => n.id)).toEqual([11, 12]);
    expect(seeded.firewalls.map((f) => f.id)).toEqual([7]);
    await new ConfigReader(linode, 0).read(nb(T2), signal, { ...every, recorded });
    expect(calls.splice(0)).toEqual(["configs", "nodes 1", "nodes 2", "firewalls"]);
  });

  it("a read within `updated`'s second (and 2 s for clocks) is not trusted: the next look reads in full again, and status gets no `updated` from it", async () => {
    const { linode, calls } = fake();
    const r = new ConfigReader(linode, 0);
    const now = new Date().toISOString().slice(0, 19);
    const first = await r.read(nb(now), signal, every);
    expect(first.updated).toBeUndefined();
    calls.splice(0);
    await r.read(nb(now), signal, every);
    expect(calls).toEqual(["configs", "nodes 1", "nodes 2", "firewalls"]);
    expect((await r.read(nb(T1), signal, every)).updated).toBe(T1);
  });

  it("when the API says when it served the configs list (its Date header), trust goes by that clock, not this node's", async () => {
    const { linode, calls, state } = fake();
    // This node's clock runs a minute ahead of the API's: by it, a read in `updated`'s very second looks a minute later.
    const updated = new Date(Date.now() - 60_000).toISOString().slice(0, 19);
    state.servedAt = Date.parse(`${updated}Z`) + 500;
    const ahead = new ConfigReader(linode, 0);
    expect((await ahead.read(nb(updated), signal, every)).updated).toBeUndefined();
    calls.splice(0);
    await ahead.read(nb(updated), signal, every);
    expect(calls.splice(0)).toEqual(["configs", "nodes 1", "nodes 2", "firewalls"]);
    // Served one whole second after `updated`'s: still not (the API's servers may differ by a second); two: trusted.
    state.servedAt = Date.parse(`${updated}Z`) + 1_000;
    expect((await ahead.read(nb(updated), signal, every)).updated).toBeUndefined();
    state.servedAt = Date.parse(`${updated}Z`) + 2_000;
    expect((await ahead.read(nb(updated), signal, every)).updated).toBe(updated);
    calls.splice(0);
    await ahead.read(nb(updated), signal, every);
    expect(calls).toEqual(["configs (routine)"]);
    // This node's clock behind the API's: a read it would place within `updated`'s second, served seconds after it, is trusted.
    const now = new Date(Date.now() + 60_000).toISOString().slice(0, 19);
    state.servedAt = Date.parse(`${now}Z`) + 3_000;
    expect((await new ConfigReader(linode, 0).read(nb(now), signal, every)).updated).toBe(now);
  });

  it("a read cut short (a nodes list held back) is gone on with by the next pass: no list read twice", async () => {
    const { linode, calls, state } = fake();
    const r = new ConfigReader(linode, 0);
    state.holdNodes = 2;
    await expect(r.read(nb(T1), signal, every)).rejects.toThrow("held back");
    expect(calls.splice(0)).toEqual(["configs", "nodes 1"]);
    delete state.holdNodes;
    const read = await r.read(nb(T1), signal, every);
    expect(calls.splice(0)).toEqual(["nodes 2", "firewalls"]);
    expect(read.configs.map((c) => c.nodes.length)).toEqual([2, 2]);
    expect(read.updated).toBe(T1);
    // Whole now: the next look reads the configs list alone, as after any read.
    await r.read(nb(T1), signal, every);
    expect(calls.splice(0)).toEqual(["configs (routine)"]);
    expect(r.size).toBe(1);
  });

  it("a read cut short is not gone on with once `updated` moved, a minute passed, or we changed the NodeBalancer", async () => {
    const { linode, calls, state } = fake();
    const cutShort = async (r: ConfigReader): Promise<void> => {
      state.holdNodes = 2;
      await expect(r.read(nb(T1), signal, every)).rejects.toThrow("held back");
      delete state.holdNodes;
      calls.splice(0);
    };
    const moved = new ConfigReader(linode, 0);
    await cutShort(moved);
    await moved.read(nb(T2), signal, every);
    expect(calls.splice(0)).toEqual(["configs", "nodes 1", "nodes 2", "firewalls"]);

    const late = new ConfigReader(linode, 0);
    await cutShort(late);
    vi.setSystemTime(Date.now() + 60_000);
    await late.read(nb(T1), signal, every);
    expect(calls.splice(0)).toEqual(["configs", "nodes 1", "nodes 2", "firewalls"]);

    const ours = new ConfigReader(linode, 0);
    await cutShort(ours);
    ours.changed(1, [2]);
    await ours.read(nb(T1), signal, every);
    expect(calls.splice(0)).toEqual(["configs", "nodes 1", "nodes 2", "firewalls"]);
    // Invalidated (the NodeBalancer gone): nothing is kept of it.
    const gone = new ConfigReader(linode, 0);
    await cutShort(gone);
    expect(gone.size).toBe(1);
    gone.invalidate(1);
    expect(gone.size).toBe(0);
  });

  it("the safety net, when set, reads everything again a period apart whatever `updated` says", async () => {
    const { linode, calls } = fake();
    const r = new ConfigReader(linode, 1, () => 0);
    await r.read(nb(T1), signal, every);
    calls.splice(0);
    vi.setSystemTime(Date.now() + 5);
    await r.read(nb(T1), signal, every);
    expect(calls).toEqual(["configs", "nodes 1", "nodes 2", "firewalls"]);
  });
});
