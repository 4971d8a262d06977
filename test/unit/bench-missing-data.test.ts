// The benchmarks' checks fed data that never arrived: each must say "no data" (and, with a
// target, not met) rather than count the missing data as 0 and pass.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createConnection, createServer, type AddressInfo, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { writesBetween, writesFrom } from "../bench/apiserver-writes.ts";
import { Peak } from "../bench/metrics.ts";
import { accountTally } from "../bench/noisy-neighbour-phase.ts";
import { figureOf, NO_DATA } from "../bench/report/figure.ts";
import { renderMarkdown } from "../bench/report/markdown.ts";
import { resultCollector, type BenchResult } from "../bench/report/result.ts";
import { mapsNotBack } from "../bench/soak-parts.ts";
import { openConnections } from "../harness/sockets.ts";

describe("openConnections", () => {
  it("counts a live process's connections and has no count for a process that is gone", async () => {
    const server = createServer((s) => { s.on("error", () => undefined); });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    // Counted against what this process held to that port number before: a socket an earlier
    // test file in this worker left open (its server closed, the port handed out again) counts too.
    const before = await openConnections("self", port);
    const client: Socket = createConnection({ port, host: "127.0.0.1" });
    await once(client, "connect");
    try {
      expect(await openConnections(process.pid, port)).toBe(before + 1);
      expect(await openConnections("self", port)).toBe(before + 1);

      const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
      const pid = child.pid;
      if (pid === undefined) throw new Error("no child pid");
      await once(child, "exit");
      // Reaped: its /proc entries are gone.
      expect(await openConnections(pid, port)).toBeUndefined();
    } finally {
      client.destroy();
      await new Promise((r) => server.close(r));
    }
  });

  it("keeps a peak unknown once a sample was missed", () => {
    const peak = new Peak();
    expect(peak.value).toBeUndefined();
    peak.see(3);
    peak.see(1);
    expect(peak.value).toBe(3);
    peak.see(undefined);
    peak.see(2);
    expect(peak.value).toBeUndefined();
  });
});

describe("the API server's write count", () => {
  const resources = ["manageddatabases", "secrets", "events"];
  const page = [
    "# HELP apiserver_request_total [STABLE] Counter of apiserver requests",
    "# TYPE apiserver_request_total counter",
    'apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="secrets",scope="resource",subresource="",verb="POST",version="v1"} 4',
    'apiserver_request_total{code="200",component="apiserver",dry_run="",group="linode.operator.dev",resource="manageddatabases",scope="resource",subresource="status",verb="APPLY",version="v1alpha1"} 7',
    'apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="secrets",scope="resource",subresource="",verb="GET",version="v1"} 90',
    'apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1"} 30',
  ].join("\n");

  it("counts writes to the resources asked about, by verb and resource", () => {
    expect(writesFrom(200, page, resources)).toEqual(new Map([["POST secrets", 4], ["APPLY manageddatabases/status", 7]]));
    expect(writesBetween(new Map([["POST secrets", 4]]), writesFrom(200, page, resources))).toEqual({ total: 7, byKey: [["APPLY manageddatabases/status", 7]] });
  });

  it("has no count from a 403 answer or from a page without the counter, and no difference from a missing reading", () => {
    expect(writesFrom(403, '{"kind":"Status","status":"Failure","reason":"Forbidden","code":403}', resources)).toBeUndefined();
    expect(writesFrom(200, "", resources)).toBeUndefined();
    expect(writesFrom(200, "# HELP process_cpu_seconds_total\nprocess_cpu_seconds_total 1.5\n", resources)).toBeUndefined();
    expect(writesBetween(new Map(), writesFrom(200, "", resources))).toBeUndefined();
    expect(writesBetween(writesFrom(403, page, resources), writesFrom(200, page, resources))).toBeUndefined();
    // The counter there but no write to these resources: a real 0.
    expect(writesFrom(200, page, ["nodebalancers"])).toEqual(new Map());
  });
});

describe("the soak's maps not back", () => {
  it("counts a map there before the churn and absent at the end as not back", () => {
    const before = new Map([["ManagedDatabase.keyOf", 1000], ["workqueue.failures", 0], ["linode.accounts", 5]]);
    expect(mapsNotBack(before, new Map([["ManagedDatabase.keyOf", 1004], ["linode.accounts", 5]]))).toEqual(["workqueue.failures"]);
    expect(mapsNotBack(before, new Map())).toEqual(["linode.accounts", "ManagedDatabase.keyOf", "workqueue.failures"].sort());
  });

  it("judges the maps present at both ends by their size", () => {
    const before = new Map([["a", 1000], ["b", 0]]);
    expect(mapsNotBack(before, new Map([["a", 1028], ["b", 8]]))).toEqual([]);
    expect(mapsNotBack(before, new Map([["a", 1029], ["b", 9], ["c", 9]]))).toEqual(["a", "b", "c"]);
  });
});

describe("the noisy neighbour's tallies", () => {
  it("has no counts for an account none of whose requests arrived", () => {
    const none = { calls: [], mostInAWindow: undefined, faulted429: undefined, limited429: undefined };
    expect(accountTally(undefined)).toEqual(none);
    expect(accountTally({ calls: [], byWindow: new Map(), faulted429: 0, limited429: 0 })).toEqual(none);
  });

  it("counts an account's requests when they arrived", () => {
    expect(accountTally({ calls: [5, 10, 70_000], byWindow: new Map([[60_000, 2], [120_000, 1]]), faulted429: 0, limited429: 1 }))
      .toEqual({ calls: [5, 10, 70_000], mostInAWindow: 2, faulted429: 0, limited429: 1 });
  });
});

describe("a figure with no data", () => {
  it("is saved as no data and, with a target, not met whatever was computed", () => {
    expect(figureOf("Kubernetes writes while idle", undefined, undefined, "0", true)).toEqual({ label: "Kubernetes writes while idle", value: NO_DATA, target: "0", met: false });
    expect(figureOf("lag", Number.NaN, "ms", "≤ 50 ms", true)).toEqual({ label: "lag", value: NO_DATA, unit: "ms", target: "≤ 50 ms", met: false });
    expect(figureOf("ratio", Number.POSITIVE_INFINITY, "×", "≤ 1.2", (v) => v <= 1.2)).toMatchObject({ value: NO_DATA, met: false });
    // Without a target there is nothing to meet.
    expect(figureOf("peak connections to the Linode API", undefined)).toEqual({ label: "peak connections to the Linode API", value: NO_DATA });
    // A test of the value is asked only of a measured number.
    let asked = 0;
    expect(figureOf("writes", undefined, undefined, "0", (v) => { asked++; return v === 0; }).met).toBe(false);
    expect(asked).toBe(0);
    expect(figureOf("writes", 0, undefined, "0", (v) => v === 0)).toEqual({ label: "writes", value: 0, target: "0", met: true });
    expect(figureOf("writes", 3, undefined, "0", (v) => v === 0).met).toBe(false);
  });

  it("is recorded and printed as no data, not met, by a benchmark's collector", () => {
    const lines: string[] = [];
    const { figures, figure } = resultCollector((l) => lines.push(l));
    figure("peak connections to the API server", undefined, undefined, "≤ 20", (v) => v <= 20);
    expect(figures).toEqual([{ label: "peak connections to the API server", value: NO_DATA, target: "≤ 20", met: false }]);
    expect(lines).toEqual(["  peak connections to the API server: no data (target ≤ 20, NOT met)"]);
  });

  it("is rendered as no data with ❌, also from an older result that saved it as met", () => {
    const result: BenchResult = {
      name: "scale-three-kinds", title: "Scale", command: "npm run bench:scale", ranAt: "2026-11-27T10:00:00.000Z", machine: "2 cores, Node v24.21.0",
      figures: [
        figureOf("Kubernetes writes while idle", undefined, undefined, "0", (v) => v === 0),
        { label: "event-loop lag p99", value: Number.NaN, unit: "ms", target: "≤ 50 ms", met: true },
        { label: "peak connections to the Linode API", value: Number.NaN },
        { label: "429 answers", value: 0, target: "0", met: true },
      ],
    };
    const page = renderMarkdown([result]);
    expect(page).toContain("| Kubernetes writes while idle | no data | 0 | ❌ |");
    expect(page).toContain("| event-loop lag p99 | no data | ≤ 50 ms | ❌ |");
    expect(page).toContain("| peak connections to the Linode API | no data | — | — |");
    expect(page).toContain("| 429 answers | 0 | 0 | ✅ |");
  });
});
