// The operations kit as the chart renders it: a PrometheusRule whose every expression parses
// as PromQL (Prometheus' own grammar) and a Grafana dashboard the sidecar picks up, both
// naming only metrics the running operator really exports, and docs/operations.md explaining
// every alert and metric.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parser } from "@prometheus-io/lezer-promql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments, stringify } from "yaml";
import { startEmulator, type RunningEmulator } from "../../src/emulator/index.ts";
import { execCapture, useTestCluster } from "../harness/cluster.ts";
import { installCrds } from "../harness/crds.ts";
import { startOperator, type OperatorProcess } from "../harness/operator-process.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const chart = join(root, "helm/linode-operator");
const RUNBOOK = "https://docs.example.com/linode-operator/operations.md";

/** PromQL syntax errors, from Prometheus' Lezer grammar (error nodes in the tree). */
function promqlErrors(expr: string): string[] {
  const errors: string[] = [];
  parser.parse(expr).iterate({ enter: (n) => { if (n.type.isError) errors.push(`at ${String(n.from)}: ${expr.slice(Math.max(0, n.from - 10), n.to + 10)}`); } });
  return errors;
}

/** Metric names an expression uses (histogram suffixes folded into the family). */
function metricNames(expr: string): string[] {
  return [...expr.matchAll(/\b(linode_[a-z0-9_]+)/g)].map((m) => (m[1] ?? "").replace(/_(bucket|sum|count)$/, ""));
}

interface Rule { alert: string; expr: string; annotations: { runbook_url: string } }
interface Dashboard { panels: { title: string; targets: { expr: string }[] }[] }

describe("operations kit: alerts and dashboard", () => {
  const cluster = useTestCluster("ops");
  let emulator: RunningEmulator;
  let operator: OperatorProcess;
  let exported: Set<string>;
  const SHARDS_ONLY = ["linode_operator_shards", "linode_operator_shard_moves_total", "linode_operator_takeover_seconds"];
  /** The running operator's /metrics, as scraped. */
  let exposition: string;
  const helm = (args: string[]): ReturnType<typeof execCapture> => execCapture(join(cluster.binDir, "helm"), args);

  beforeAll(async () => {
    await installCrds(cluster);
    emulator = await startEmulator({ port: 0, tokens: ["ops-token"] });
    operator = startOperator([], {
      KUBECONFIG: cluster.adminKubeconfig, LINODE_TOKEN: "ops-token", LINODE_API_URL: emulator.url, LEADER_ELECT: "false",
      // As the chart runs it for release "ops" in namespace "default": the install the alerts select.
      POD_NAMESPACE: "default", LEADER_ELECTION_ID: "ops-linode-operator",
      WATCH_NAMESPACES: cluster.namespace, HEALTH_PORT: "0", METRICS_PORT: "0", BIND_ADDRESS: "127.0.0.1",
    });
    const started = await operator.waitForLog((l) => l.msg === "operator started", 60_000);
    const text = await (await fetch(`http://127.0.0.1:${String(started.metricsPort)}/metrics`)).text();
    exposition = text;
    exported = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1] ?? ""));
  });
  afterAll(async () => {
    operator.child.kill("SIGTERM");
    await operator.exited;
    await emulator.close();
  });

  const render = async (template: string): Promise<unknown> => {
    const out = await helm(["template", "ops", chart, "--namespace", "default", "--set", "linode.token=x", "--set", "metrics.prometheusRule.enabled=true", "--set", `metrics.prometheusRule.runbookBaseUrl=${RUNBOOK}`, "--set", "metrics.grafanaDashboard.enabled=true", "--show-only", template]);
    expect(out.code, out.stderr).toBe(0);
    const docs = parseAllDocuments(out.stdout).map((d) => d.toJS() as unknown).filter((d) => d !== null);
    expect(docs).toHaveLength(1);
    return docs[0];
  };

  it("every alert is valid PromQL over exported metrics, selects the install by its operator label (no job), with an absolute runbook_url to its section of docs/operations.md", async () => {
    const rule = await render("templates/prometheusrule.yaml") as { kind: string; spec: { groups: { rules: Rule[] }[] } };
    expect(rule.kind).toBe("PrometheusRule");
    const rules = rule.spec.groups.flatMap((g) => g.rules);
    expect(rules.map((r) => r.alert)).toEqual(["LinodeOperatorNoLeader", "LinodeOperatorReconcileErrors", "LinodeOperatorResourceNotReady", "LinodeApiRateLimitLow", "LinodeApiErrors"]);
    const docs = await readFile(join(root, "docs/operations.md"), "utf8");
    for (const r of rules) {
      expect(promqlErrors(r.expr), `${r.alert}: ${r.expr}`).toEqual([]);
      for (const name of metricNames(r.expr)) expect(exported, `${r.alert} uses ${name}`).toContain(name);
      expect(r.expr).toContain('operator="default/ops-linode-operator"');
      expect(r.expr).not.toMatch(/\bjob\s*=/);
      expect(docs).toContain(`### ${r.alert}`);
      expect(r.annotations.runbook_url).toBe(`${RUNBOOK}#${r.alert.toLowerCase()}`);
    }
  });

  it("the alerts evaluate as meant on the running operator's own metrics, scraped under two job names at once (promtool)", async () => {
    const rule = await render("templates/prometheusrule.yaml") as { spec: { groups: unknown[] } };
    const dir = await mkdtemp(join(tmpdir(), "alerts-"));
    try {
      await writeFile(join(dir, "rules.yml"), stringify({ groups: rule.spec.groups }));
      // Every sample of the real exposition, held for 40 minutes, as a target of each job.
      const samples = [...exposition.matchAll(/^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/gm)]
        .map((m) => ({ name: m[1] ?? "", labels: m[2] ?? "", value: Number(m[3]) }))
        .filter((x) => Number.isFinite(x.value));
      expect(samples.find((x) => x.name === "linode_operator_leader")?.labels).toBe('operator="default/ops-linode-operator"');
      const jobs = ["kubernetes-pods", "ops-linode-operator-metrics"];
      const scraped = (edit: (x: { name: string; labels: string; value: number }) => { name: string; labels: string; value: number } | undefined = (x) => x) =>
        jobs.flatMap((job) => samples.map(edit).filter((x) => x !== undefined).map((x) => ({
          series: `${x.name}{${[x.labels, `job="${job}"`, 'instance="10.1.2.3:8080"'].filter((l) => l !== "").join(",")}}`,
          values: `${String(x.value)}+0x40`,
        })));
      const none = (at: string): unknown[] => ["LinodeOperatorNoLeader", "LinodeOperatorReconcileErrors", "LinodeOperatorResourceNotReady", "LinodeApiRateLimitLow", "LinodeApiErrors"]
        .map((alertname) => ({ eval_time: at, alertname, exp_alerts: [] }));
      const runbook = (alert: string): string => `${RUNBOOK}#${alert.toLowerCase()}`;
      const tests = [
        { name: "healthy, scraped by two jobs: nothing fires", interval: "1m", input_series: scraped(), alert_rule_test: none("30m") },
        {
          name: "no replica leads (seen by both jobs)", interval: "1m",
          input_series: scraped((x) => (x.name === "linode_operator_leader" ? { ...x, value: 0 } : x)),
          alert_rule_test: [{ eval_time: "10m", alertname: "LinodeOperatorNoLeader", exp_alerts: [{ exp_labels: { severity: "critical" }, exp_annotations: { summary: "No linode-operator replica leads, so nothing is reconciled.", runbook_url: runbook("LinodeOperatorNoLeader") } }] }],
        },
        {
          name: "only another install is scraped: this one's leader is absent", interval: "1m",
          input_series: scraped((x) => ({ ...x, labels: x.labels.replace('operator="default/ops-linode-operator"', 'operator="other/linode-operator"') })),
          alert_rule_test: [{ eval_time: "10m", alertname: "LinodeOperatorNoLeader", exp_alerts: [{ exp_labels: { severity: "critical", operator: "default/ops-linode-operator" }, exp_annotations: { summary: "No linode-operator replica leads, so nothing is reconciled.", runbook_url: runbook("LinodeOperatorNoLeader") } }] }],
        },
        {
          // 0.1 failures a second, scraped by both jobs: reported as 0.1 (100m), not 0.2.
          name: "reconciles failing, counted once though scraped twice", interval: "1m",
          input_series: [
            ...scraped(),
            ...jobs.map((job) => ({ series: `linode_operator_reconcile_total{kind="ManagedDatabase",result="error",job="${job}",instance="10.1.2.3:8080"}`, values: "0+6x40" })),
          ],
          alert_rule_test: [{ eval_time: "30m", alertname: "LinodeOperatorReconcileErrors", exp_alerts: [{ exp_labels: { severity: "warning", kind: "ManagedDatabase" }, exp_annotations: { summary: "ManagedDatabase reconciles keep failing (100m/s).", runbook_url: runbook("LinodeOperatorReconcileErrors") } }] }],
        },
      ];
      await writeFile(join(dir, "tests.yml"), stringify({ rule_files: ["rules.yml"], evaluation_interval: "1m", tests }));
      const r = await execCapture(join(cluster.binDir, "promtool"), ["test", "rules", join(dir, "tests.yml")]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("the dashboard is a ConfigMap with the sidecar's label, and every panel queries exported metrics in valid PromQL", async () => {
    const cm = await render("templates/grafana-dashboard.yaml") as { kind: string; metadata: { labels: Record<string, string> }; data: Record<string, string> };
    expect(cm.kind).toBe("ConfigMap");
    expect(cm.metadata.labels.grafana_dashboard).toBe("1");
    const dashboard = JSON.parse(cm.data["linode-operator.json"] ?? "") as Dashboard;
    expect(dashboard.panels.length).toBeGreaterThanOrEqual(10);
    const docs = await readFile(join(root, "docs/operations.md"), "utf8");
    for (const p of dashboard.panels) {
      for (const t of p.targets) {
        // Grafana's variables are not PromQL: give them a value first.
        const expr = t.expr.replaceAll("$job", ".*");
        expect(promqlErrors(expr), `${p.title}: ${expr}`).toEqual([]);
        for (const name of metricNames(expr)) {
          // Registered with --shards only (test/integration/shards.test.ts scrapes them from a sharded replica).
          if (!SHARDS_ONLY.includes(name)) expect(exported, `${p.title} uses ${name}`).toContain(name);
          expect(docs, `docs/operations.md explains ${name}`).toContain(`\`${name}\``);
        }
      }
    }
  });
});
