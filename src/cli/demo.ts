// `linode-operator demo`: the whole product on one machine, offline. Starts the Linode API
// emulator and a local Kubernetes control plane (or uses the current kubectl context),
// installs the CRDs, runs the operator, applies the example ManagedDatabases,
// DatabaseSnapshots, DatabaseConnectionPools and NodeBalancers (with a self-signed certificate
// for their https ports) and shows them becoming Ready, then the connection Secrets' keys and how
// to read them.
// By default it shows what a new user meets today: new databases on Linode's current platform,
// one restored by fork, next to an older (legacy-platform) database adopted by id with a
// snapshot, as snapshots exist only there; a database whose allow list follows the cluster's
// nodes; a PgBouncer pool next to a PostgreSQL database, read through by its own Secret; and a
// premium NodeBalancer whose backends are the nodes inside a VPC. Ctrl-C cleans up.
import { randomBytes } from "node:crypto";
import { createWriteStream, existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { parseAllDocuments } from "yaml";
import { execCapture } from "../local-cluster/exec.ts";
import { startControlPlane, type ControlPlane } from "../local-cluster/control-plane.ts";
import { generateCertificate } from "../emulator/certs.ts";
import { startEmulator } from "../emulator/index.ts";
import { connectKube } from "../kube/config.ts";
import { isConflict } from "../kube/errors.ts";
import { operatorConfigSchema } from "../config/operator-config.ts";
import { createLogger } from "../runtime/logger.ts";
import { assembleOperator } from "./assemble-operator.ts";
import type { ManagedObject } from "../runtime/managed.ts";
import type { CommonStatus, ConnectionStatus } from "../runtime/condition-schema.ts";
import { databaseConnectionPoolType, type DatabaseConnectionPoolStatus } from "../resources/database-connection-pool/public.ts";
import { databaseSnapshotType } from "../resources/database-snapshot/public.ts";
import { managedDatabaseType, type ManagedDatabaseStatus } from "../resources/managed-database/public.ts";
import { nodeBalancerType, type NodeBalancerSpec, type NodeBalancerStatus } from "../resources/node-balancer/public.ts";

/** The statuses as the API server holds them: the kind's own fields and the runtime's. */
type DatabaseStatus = ManagedDatabaseStatus & CommonStatus & ConnectionStatus;
type PoolStatus = DatabaseConnectionPoolStatus & ConnectionStatus;

const HELP = `Usage: linode-operator demo [options]

Runs the Linode API emulator, a local Kubernetes control plane and the operator, applies the
example ManagedDatabases, DatabaseSnapshots, DatabaseConnectionPools and NodeBalancers
(creating a self-signed TLS Secret for each https port that names one not there; with a local
control plane, a VPC whose subnet holds the demo nodes, for a premium NodeBalancer following
them) and shows them becoming Ready, then a node joining the cluster and its address joining a
database's allow list. Nothing leaves this machine.

  --use-current-context   use your current kubectl context (e.g. a kind cluster) instead of a
                          local control plane; only the emulator and the operator run locally
  --namespace NS          namespace for the examples (default linode-demo)
  --examples DIR          manifests to apply (default: the repository's examples/)
  --exit-when-ready       clean up and exit once everything is Ready (for scripts)
  --provision-seconds S   how long the emulator takes to provision a database (default 5)
  --platform P            current (default: what Linode creates today; the examples' orders is
                          restored by fork, and an older legacy database is adopted for the
                          snapshot) or legacy (every database on the legacy platform)
  -h, --help              show this help
`;

const repoDir = (rel: string): string => [new URL(`../../${rel}`, import.meta.url)].map((u) => fileURLToPath(u))[0] ?? rel;

export async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv, strict: true,
    options: {
      "use-current-context": { type: "boolean", default: false },
      namespace: { type: "string", default: "linode-demo" },
      examples: { type: "string" },
      "exit-when-ready": { type: "boolean", default: false },
      "provision-seconds": { type: "string", default: "5" },
      platform: { type: "string", default: "current" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) { process.stdout.write(HELP); return 0; }
  const say = (s: string): void => { process.stdout.write(`${s}\n`); };
  const namespace = values.namespace;
  const examplesDir = values.examples ?? repoDir("examples");
  const platform = values.platform;
  if (platform !== "current" && platform !== "legacy") throw new Error(`--platform is current or legacy, not ${platform}`);
  const work = await mkdtemp(join(tmpdir(), "linode-operator-demo-"));
  const cleanups: (() => Promise<void>)[] = [async () => { await rm(work, { recursive: true, force: true }); }];
  const cleanup = async (): Promise<void> => { for (const c of cleanups.reverse()) await c().catch(() => undefined); };
  const state = { interrupted: false };
  const onSignal = (): void => { state.interrupted = true; };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  try {
    const token = randomBytes(16).toString("hex");
    const emulator = await startEmulator({ port: 0, tokens: [token], provisionSeconds: Number(values["provision-seconds"]), platform });
    cleanups.push(() => emulator.close());
    say(`✓ Linode API emulator on ${emulator.url} (new databases on Linode's ${platform} platform)`);

    let kubeconfig: string | undefined;
    let kubectlBin = "kubectl";
    let cp: ControlPlane | undefined;
    if (!values["use-current-context"]) {
      say("… starting a local Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager; the first run builds them from the Go module proxy: minutes)");
      cp = await startControlPlane();
      const plane = cp;
      cleanups.push(() => plane.stop());
      kubeconfig = join(work, "kubeconfig");
      await writeFile(kubeconfig, await readFile(cp.adminKubeconfig), { mode: 0o600 });
      kubectlBin = join(cp.binDir, "kubectl");
      say(`✓ Kubernetes ${cp.version} at ${cp.server} (ready in ${(cp.startMillis / 1000).toFixed(1)} s)`);
    }
    const kubectl = (args: string[], input?: string): ReturnType<typeof execCapture> =>
      execCapture(kubectlBin, [...(kubeconfig !== undefined ? ["--kubeconfig", kubeconfig] : []), ...args], input !== undefined ? { input } : {});

    const crdDir = repoDir("crds");
    const crds = (await readdir(crdDir)).filter((f) => f.endsWith(".yaml")).map((f) => join(crdDir, f));
    const applied = await kubectl(["apply", "--server-side", "--force-conflicts", "--field-manager=linode-operator", ...crds.flatMap((f) => ["-f", f])]);
    if (applied.code !== 0) throw new Error(`installing the CRDs failed: ${applied.stderr}`);
    await kubectl(["wait", "--for=condition=Established", "--timeout=60s", ...crds.flatMap((f) => ["-f", f])]);
    say(`✓ CRDs installed: ${crds.length} kinds (kubectl get linode)`);

    const kube = connectKube(kubeconfig);
    const logFile = join(work, "operator.log");
    const log = createLogger({ level: "info" }, createWriteStream(logFile));
    // The demo's namespace may adopt by id (the legacy database) and publish a port of the nodes (the VPC NodeBalancer).
    const config = { ...operatorConfigSchema.parse({ linodeToken: token, linodeApiUrl: emulator.url, namespaces: [namespace], adoptNamespaces: [namespace], nodePortNamespaces: [namespace], readNodes: true, identity: "demo", leaderElect: false, healthPort: 0, metricsPort: 0, bindAddress: "127.0.0.1" }), kindSettings: { "database-platform": platform } };
    const operator = await assembleOperator({ config, kube, log, defaultMetrics: false, onLostLeadership: () => undefined });
    const { manager } = operator;
    await kubectl(["create", "namespace", namespace]);
    await manager.start();
    cleanups.push(() => operator.stop());
    say(`✓ operator running (logs: ${logFile})`);

    const manifests = await exampleManifests(examplesDir);
    // A database whose allow list follows the cluster's nodes. The local control plane has no
    // kubelet: two Node objects stand for nodes registering (documentation addresses); a third
    // joins once everything is Ready.
    manifests.push(...await exampleManifests(join(examplesDir, "cluster-nodes")));
    const demoNode = async (n: number): Promise<void> => {
      // Addresses as an LKE Enterprise node has them: public, and private inside the cluster's VPC subnet.
      const node = { apiVersion: "v1", kind: "Node", metadata: { name: `demo-node-${String(n)}`, labels: { "linode.operator.dev/demo": "true" } }, status: {
        addresses: [{ type: "ExternalIP", address: `198.51.100.${String(10 + n)}` }, { type: "InternalIP", address: `${DEMO_SUBNET_PREFIX}${String(10 + n)}` }],
        conditions: [{ type: "Ready", status: "True", reason: "KubeletReady", message: "a demo node (no kubelet runs)" }],
      } };
      const made = await kubectl(["create", "-f", "-"], JSON.stringify(node));
      if (made.code !== 0) throw new Error(`registering the demo Node failed: ${made.stderr}`);
    };
    if (cp !== undefined) {
      for (const n of [1, 2]) await demoNode(n);
      say("✓ Nodes demo-node-1 and demo-node-2 registered (Node objects only: the local control plane runs no kubelet)");
      // What the cluster's VPC is on LKE Enterprise: made outside the operator, named by the NodeBalancer.
      await createDemoVpc(emulator.url, token);
      say(`✓ VPC ${DEMO_VPC} with the subnet nodes (${DEMO_SUBNET}) in us-east, holding the demo nodes' InternalIPs`);
      manifests.push(...await exampleManifests(join(examplesDir, "vpc")));
    }
    if (platform === "legacy") {
      // Pools exist only on the current platform: there they would only say UnsupportedOnPlatform.
      const kept = manifests.filter((m) => m.kind !== "DatabaseConnectionPool");
      manifests.length = 0;
      manifests.push(...kept);
    }
    if (platform === "current") {
      manifests.push(...await exampleManifests(join(examplesDir, "current-platform")));
      // An older database the account already has, on the legacy platform: adopted by id, and
      // the example snapshots taken of it, as snapshots exist only there.
      const legacy = await seedLegacyDatabase(emulator.adminUrl);
      manifests.push(legacyDatabase(legacy));
      for (const snap of manifests.filter((m) => m.kind === "DatabaseSnapshot")) (snap as unknown as { spec: { databaseRef: { name: string } } }).spec.databaseRef = { name: LEGACY_NAME };
      say(`✓ an older MySQL database on Linode's legacy platform (id ${String(legacy)}) is adopted as managedDatabase/${LEGACY_NAME}; the example snapshots are of it (the current platform has no snapshots: orders is restored by fork, as orders-restored)`);
    }
    const databases = manifests.filter((m) => m.kind === "ManagedDatabase");
    const snapshots = manifests.filter((m) => m.kind === "DatabaseSnapshot");
    const balancers = manifests.filter((m) => m.kind === "NodeBalancer");
    const pools = manifests.filter((m) => m.kind === "DatabaseConnectionPool");
    if (databases.length === 0) throw new Error(`no ManagedDatabase manifests in ${examplesDir}`);
    for (const name of tlsSecretNames(balancers)) {
      // What `kubectl create secret tls` (or cert-manager) does for a user: a demo certificate.
      const cert = generateCertificate({ commonName: `${name}.demo.example`, days: 30 });
      try {
        await kube.createSecret({
          metadata: { name, namespace }, type: "kubernetes.io/tls",
          data: { "tls.crt": Buffer.from(cert.certPem).toString("base64"), "tls.key": Buffer.from(cert.keyPem).toString("base64") },
        });
        say(`✓ created TLS Secret ${name} (self-signed, for the demo's https port)`);
      } catch (err) {
        if (!isConflict(err)) throw err;
        say(`✓ TLS Secret ${name} exists: kept`);
      }
    }
    const apply = await kubectl(["-n", namespace, "apply", "-f", "-"], manifests.map((m) => JSON.stringify(m)).join("\n"));
    if (apply.code !== 0) throw new Error(`kubectl apply failed: ${apply.stderr}`);
    say(`✓ applied ${manifests.map((m) => `${m.kind.charAt(0).toLowerCase()}${m.kind.slice(1)}/${m.metadata.name}`).join(", ")} in namespace ${namespace}\n`);

    const started = Date.now();
    let lastTable = "";
    let ready = false;
    const isReady = (o: ManagedObject): boolean => o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;
    while (!state.interrupted && !ready) {
      const dbs = (await kube.list<ManagedObject>(managedDatabaseType, { namespace })).items;
      const snaps = (await kube.list<ManagedObject>(databaseSnapshotType, { namespace })).items;
      const nbs = (await kube.list<ManagedObject>(nodeBalancerType, { namespace })).items;
      const pls = (await kube.list<ManagedObject>(databaseConnectionPoolType, { namespace })).items;
      const table = [render(dbs), ...(snaps.length > 0 ? [renderSnapshots(snaps)] : []), ...(pls.length > 0 ? [renderPools(pls)] : []), ...(nbs.length > 0 ? [renderNodeBalancers(nbs)] : [])].join("\n\n");
      if (table !== lastTable) {
        say(`[${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s]\n${table}\n`);
        lastTable = table;
      }
      ready = dbs.length === databases.length && snaps.length === snapshots.length && nbs.length === balancers.length && pls.length === pools.length && [...dbs, ...snaps, ...pls, ...nbs].every(isReady);
      if (!ready) await new Promise((r) => setTimeout(r, 1_000));
    }
    if (ready) {
      const counted = (n: number, what: string): string => `${String(n)} ${what}${n === 1 ? "" : "s"}`;
      const parts = [counted(databases.length, "database"), ...(snapshots.length > 0 ? [counted(snapshots.length, "snapshot")] : []), ...(pools.length > 0 ? [counted(pools.length, "connection pool")] : []), ...(balancers.length > 0 ? [counted(balancers.length, "NodeBalancer")] : [])];
      const said = parts.length > 1 ? `${parts.slice(0, -1).join(", ")} and ${parts.at(-1) ?? ""}` : parts.join("");
      say(`All ${said} are Ready after ${((Date.now() - started) / 1000).toFixed(1)} s.\n`);
      const list = await kube.list<ManagedObject>(managedDatabaseType, { namespace });
      for (const o of list.items) {
        const secretName = (o.status as DatabaseStatus | undefined)?.connectionSecretName ?? "";
        const secret = await kube.getSecret({ namespace, name: secretName });
        say(`Secret ${namespace}/${secretName} (owned by managedDatabase/${o.metadata.name}) has keys: ${Object.keys(secret.data ?? {}).sort().join(", ")}`);
      }
      for (const o of (await kube.list<ManagedObject>(databaseConnectionPoolType, { namespace })).items) {
        const st = o.status as PoolStatus | undefined;
        const secret = await kube.getSecret({ namespace, name: st?.connectionSecretName ?? "" });
        const uri = Buffer.from(secret.data?.uri ?? "", "base64").toString();
        // What an application reads as DATABASE_URL (examples/app-through-pool.yaml): through the pool, never the password shown.
        say(`Secret ${namespace}/${st?.connectionSecretName ?? ""} (owned by databaseConnectionPool/${o.metadata.name}): an application reading DATABASE_URL from its uri connects through the pool: ${redactPassword(uri)} (examples/app-through-pool.yaml is one; it runs where the cluster has nodes, which this control plane has not)`);
      }
      const kcArg = kubeconfig !== undefined ? ` --kubeconfig ${kubeconfig}` : "";
      const first = (list.items[0]?.status as DatabaseStatus | undefined)?.connectionSecretName ?? "";
      say(`
How to use it:
  kubectl${kcArg} get linode -n ${namespace}
  kubectl${kcArg} -n ${namespace} get secret ${first} -o jsonpath='{.data.uri}' | base64 -d
  An application mounts the Secret as files (see examples/), e.g. /etc/db/host, /etc/db/password,
  /etc/db/ca.crt, or binds it as a Service Binding. The emulator's hosts resolve nowhere: point
  LINODE_API_URL at the real API (and LINODE_TOKEN at a real token) for real databases.
  Linode API emulator: ${emulator.url} (token ${token}); try: curl -H "Authorization: Bearer ${token}" ${emulator.url}/databases/instances`);
    }
    if (ready && cp !== undefined && manifests.some((m) => m.metadata.name === "reports")) {
      const joined = Date.now();
      await demoNode(3);
      const entry = "198.51.100.13/32";
      let seen = false;
      while (!state.interrupted && !seen && Date.now() - joined < 60_000) {
        const reports = await kube.getCustom<ManagedObject>(managedDatabaseType, { namespace, name: "reports" });
        seen = ((reports.status as DatabaseStatus | undefined)?.allowList ?? []).some((a) => a.entry === entry);
        if (!seen) await new Promise((r) => setTimeout(r, 250));
      }
      say(seen
        ? `✓ demo-node-3 joined the cluster: its address ${entry} is in reports' allow list after ${((Date.now() - joined) / 1000).toFixed(1)} s (kubectl get linodedb reports -o jsonpath='{.status.allowList}')`
        : `✗ demo-node-3 joined the cluster, and its address is not in reports' allow list after 60 s`);
    }
    if (!values["exit-when-ready"] && !state.interrupted) {
      say("\nPress Ctrl-C to stop and clean up.");
      while (!state.interrupted) await new Promise((r) => setTimeout(r, 200));
    }
    if (values["use-current-context"]) {
      // Delete while the operator still runs, so finalizers complete against the emulator.
      say("Deleting the demo resources…");
      await kubectl(["delete", "namespace", namespace, "--wait=true", "--timeout=60s"]);
    }
    say("Cleaning up…");
    await cleanup();
    say("Done.");
    return state.interrupted && !ready ? 130 : 0;
  } catch (err) {
    await cleanup();
    throw err;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

interface Manifest { kind: string; metadata: { name: string; namespace?: string } }

const LEGACY_NAME = "orders-legacy";

/** A legacy-platform database made through the emulator's admin API, as one made years ago; its id. */
async function seedLegacyDatabase(adminUrl: string): Promise<number> {
  const res = await fetch(`${adminUrl}/seed`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ databases: { count: 1, platform: "legacy", labelPrefix: "orders-2021" } }) });
  if (!res.ok) throw new Error(`seeding the legacy database failed: ${String(res.status)} ${await res.text()}`);
  return ((await res.json()) as { databases: { first_id: number } }).databases.first_id;
}

/** The ManagedDatabase that adopts it (the demo's namespace may adopt with the operator's token). */
function legacyDatabase(id: number): Manifest {
  return {
    apiVersion: "linode.operator.dev/v1alpha1", kind: "ManagedDatabase", metadata: { name: LEGACY_NAME },
    spec: { engine: "mysql", version: "8", region: "us-east", type: "g6-nanode-1", allowList: ["203.0.113.0/24"], databaseId: id, deletionPolicy: "Delete" },
  } as Manifest;
}

async function exampleManifests(dir: string): Promise<Manifest[]> {
  if (!existsSync(dir)) return [];
  const files = (await readdir(dir)).filter((f) => f.endsWith(".yaml") || f.endsWith(".yml")).sort();
  const out: Manifest[] = [];
  for (const f of files) {
    for (const doc of parseAllDocuments(await readFile(join(dir, f), "utf8"))) {
      const m = doc.toJSON() as Manifest | null;
      if (m?.kind === "ManagedDatabase" || m?.kind === "DatabaseSnapshot" || m?.kind === "DatabaseConnectionPool" || m?.kind === "NodeBalancer") {
        delete m.metadata.namespace;
        out.push(m);
      }
    }
  }
  return out;
}

function render(items: ManagedObject[]): string {
  const rows = [["NAME", "ENGINE", "VERSION", "STATUS", "READY", "SYNCED", "SECRET", "PLATFORM", "FORK OF"]];
  const byId = new Map(items.map((o) => [(o.status as DatabaseStatus | undefined)?.id, o.metadata.name]));
  for (const o of items) {
    const spec = o.spec as { engine?: string; version?: string };
    const st = o.status as DatabaseStatus | undefined;
    const condition = (t: string): { status: string; reason: string } | undefined => st?.conditions?.find((c) => c.type === t);
    const cond = (t: string): string => { const c = condition(t); return c === undefined ? "" : `${c.status}${c.status === "True" ? "" : ` (${c.reason})`}`; };
    const fork = st?.fork !== undefined ? `${byId.get(st.fork.source) ?? String(st.fork.source)} @ ${st.fork.restoreTime ?? "latest"}` : "";
    rows.push([o.metadata.name, spec.engine ?? "", st?.version ?? spec.version ?? "", st?.status ?? "pending", cond("Ready"), cond("Synced"), st?.connectionSecretName ?? "", st?.platform ?? "", fork]);
  }
  return table(rows);
}

function renderSnapshots(items: ManagedObject[]): string {
  const rows = [["SNAPSHOT", "DATABASE", "PHASE", "READY", "BACKUP"]];
  for (const o of items) {
    const st = o.status as { phase?: string; backupId?: number; conditions?: { type: string; status: string; reason: string }[] } | undefined;
    const ready = st?.conditions?.find((c) => c.type === "Ready");
    rows.push([o.metadata.name, (o.spec as { databaseRef?: { name?: string } }).databaseRef?.name ?? "", st?.phase ?? "Pending", ready === undefined ? "" : `${ready.status}${ready.status === "True" ? "" : ` (${ready.reason})`}`, st?.backupId !== undefined ? String(st.backupId) : ""]);
  }
  return table(rows);
}

/** The TLS Secrets the NodeBalancers' https ports name. */
function tlsSecretNames(balancers: Manifest[]): string[] {
  const names = balancers.flatMap((m) => ((m as unknown as { spec?: Partial<NodeBalancerSpec> }).spec?.configs ?? [])
    .flatMap((c) => (c.protocol === "https" && c.tlsSecretRef !== undefined ? [c.tlsSecretRef.name] : [])));
  return [...new Set(names)];
}

function renderNodeBalancers(items: ManagedObject[]): string {
  const rows = [["NODEBALANCER", "TYPE", "HOSTNAME", "IPV4", "PORTS", "BACKENDS", "READY"]];
  for (const o of items) {
    const st = o.status as NodeBalancerStatus | undefined;
    const backends = (st?.configs ?? []).flatMap((c) => c.nodes ?? []).map((n) => `${n.address}${n.subnetId !== undefined ? ` (subnet ${String(n.subnetId)})` : ""}`);
    rows.push([o.metadata.name, st?.type ?? "", st?.hostname ?? "", st?.ipv4 ?? "", (st?.configs ?? []).map((c) => String(c.port)).join(","), backends.join(", "), readyOf(o)]);
  }
  return table(rows);
}

function renderPools(items: ManagedObject[]): string {
  const rows = [["POOL", "DATABASE", "MODE", "SIZE", "READY", "SECRET"]];
  for (const o of items) {
    const st = o.status as PoolStatus | undefined;
    rows.push([o.metadata.name, (o.spec as { databaseRef?: { name?: string } }).databaseRef?.name ?? "", st?.mode ?? "", st?.size !== undefined ? String(st.size) : "", readyOf(o), st?.connectionSecretName ?? ""]);
  }
  return table(rows);
}

function readyOf(o: ManagedObject): string {
  const ready = o.status?.conditions?.find((c) => c.type === "Ready");
  return ready === undefined ? "" : `${ready.status}${ready.status === "True" ? "" : ` (${ready.reason})`}`;
}

/** A connection URI with its password replaced: the demo shows where it connects, never the secret. */
function redactPassword(uri: string): string {
  try {
    const u = new URL(uri);
    if (u.password !== "") u.password = "****";
    return u.toString();
  } catch {
    return "(not a URL)";
  }
}

const DEMO_VPC = "demo-vpc";
const DEMO_SUBNET = "10.0.0.0/24";
const DEMO_SUBNET_PREFIX = "10.0.0.";

/** The VPC the premium NodeBalancer example names, made in the emulator as a user makes one (LKE Enterprise makes its own). */
async function createDemoVpc(apiUrl: string, token: string): Promise<void> {
  const res = await fetch(`${apiUrl}/vpcs`, {
    method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ label: DEMO_VPC, region: "us-east", subnets: [{ label: "nodes", ipv4: DEMO_SUBNET }] }),
  });
  if (!res.ok) throw new Error(`making the demo VPC failed: ${String(res.status)} ${await res.text()}`);
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i] ?? 0)).join("   ").trimEnd()).join("\n");
}
