/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-argument, @typescript-eslint/restrict-plus-operands -- assertions read the CLI's untyped JSON output */
// The official Linode CLI (linode-cli from PyPI, installed by install-linode-cli.sh into a
// venv cached outside the repository) against an in-process emulator: representative
// database and NodeBalancer commands with --json, parsed and checked. Configured without
// prompts: LINODE_CLI_TOKEN plus the LINODE_CLI_API_HOST (host:port), LINODE_CLI_API_SCHEME
// (http) and LINODE_CLI_API_VERSION (v4) overrides; also from a config file alone.
// The CLI (built from API spec 4.229) has no commands for database backups, NodeBalancer
// statistics or listing a NodeBalancer's firewalls; the linodego test covers those.
import { spawnSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateCertificate, startEmulator, type RunningEmulator } from "../../src/emulator/index.ts";
import { run, warnSkipped, type RunResult } from "./helpers.ts";

const INSTALLER = fileURLToPath(new URL("./install-linode-cli.sh", import.meta.url));
const TOKEN = "linode-cli-external-token";
const TRANSITION_SECONDS = 60;

function pythonProblem(): string | null {
  const r = spawnSync("python3", ["-c", "import venv, ensurepip"], { stdio: "ignore", timeout: 30_000 });
  if (r.error !== undefined) return "python3 is not on PATH";
  return r.status === 0 ? null : "python3 lacks the venv/ensurepip modules";
}

const problem = pythonProblem();
if (problem !== null) warnSkipped("linode-cli external-client test", `${problem}; install python3 with venv and pip to run it`);

describe.skipIf(problem !== null)("linode-cli (official Linode CLI) against the emulator", () => {
  let emu: RunningEmulator;
  let bin = "";
  let home = "";
  let env: NodeJS.ProcessEnv = {};

  beforeAll(async () => {
    const install = await run("bash", [INSTALLER], { timeoutMs: 170_000 });
    if (install.code !== 0) {
      throw new Error(`installing linode-cli failed (exit ${String(install.code)}): ${install.stderr}`);
    }
    bin = install.stdout.trim();
    emu = await startEmulator({ tokens: [TOKEN], provisionSeconds: TRANSITION_SECONDS, timeScale: 0 });
    home = mkdtempSync(join(tmpdir(), "linode-cli-home-"));
    env = {
      ...process.env,
      // A scratch home and config path: the user's own CLI config is neither read nor written.
      HOME: home,
      XDG_CONFIG_HOME: join(home, ".config"),
      LINODE_CLI_CONFIG: join(home, "linode-cli"),
      LINODE_CLI_TOKEN: TOKEN,
      LINODE_CLI_API_HOST: `127.0.0.1:${String(emu.port)}`,
      LINODE_CLI_API_SCHEME: "http",
      LINODE_CLI_API_VERSION: "v4",
      LINODE_CLI_SUPPRESS_VERSION_WARNING: "1",
    };
  }, 180_000);

  afterAll(async () => {
    await emu.close();
    if (home !== "") rmSync(home, { recursive: true, force: true });
  });

  async function raw(args: string[], extraEnv: NodeJS.ProcessEnv = env): Promise<RunResult> {
    return run(bin, ["--suppress-warnings", "--json", ...args], { env: extraEnv, timeoutMs: 60_000 });
  }

  /** Runs a command that must succeed and returns its parsed --json output (a list). */
  async function cli(...args: string[]): Promise<any[]> {
    const r = await raw(args);
    if (r.code !== 0) throw new Error(`linode-cli ${args.join(" ")} exited ${String(r.code)}: ${r.stderr}${r.stdout}`);
    return r.stdout.trim() === "" ? [] : JSON.parse(r.stdout);
  }

  /** The emulator's clock is frozen (CLI start-up is slower than any transition): move it past one transition and check the status. */
  async function settle(args: string[], status = "active"): Promise<any> {
    emu.advance(TRANSITION_SECONDS);
    const [obj] = await cli(...args);
    expect(obj.status, args.join(" ")).toBe(status);
    return obj;
  }

  it("engines, types and the MySQL lifecycle", async () => {
    const engines = await cli("databases", "engines");
    expect(engines.map((e) => e.id)).toEqual(expect.arrayContaining(["mysql/8", "postgresql/16"]));
    expect(await cli("databases", "engine-view", "mysql/8")).toEqual([{ engine: "mysql", id: "mysql/8", version: "8" }]);
    expect((await cli("databases", "types")).map((t) => t.id)).toContain("g6-nanode-1");
    expect((await cli("databases", "type-view", "g6-nanode-1"))[0]).toMatchObject({ id: "g6-nanode-1" });

    const [created] = await cli("databases", "mysql-create", "--label", "cli-mysql", "--region", "us-east", "--type", "g6-nanode-1",
      "--engine", "mysql/8", "--allow_list", "203.0.113.9", "--allow_list", "198.51.100.0/24");
    expect(created).toMatchObject({ label: "cli-mysql", engine: "mysql", version: "8", status: "provisioning", port: 3306,
      allow_list: ["198.51.100.0/24", "203.0.113.9/32"], cluster_size: 1 });
    const id = String(created.id);
    const active = await settle(["databases", "mysql-view", id], "active");
    expect(active.hosts.primary).toMatch(new RegExp(`^lin-${id}-\\d+-mysql-primary\\.servers\\.linodedb\\.net$`));
    expect(Object.values(active.members)).toEqual(["primary"]);

    expect((await cli("databases", "mysql-list")).map((d) => d.id)).toContain(created.id);
    const all = await cli("databases", "list");
    expect(all.find((d) => d.id === created.id)).toMatchObject({ engine: "mysql", instance_uri: `/v4/databases/mysql/instances/${id}` });

    const [updated] = await cli("databases", "mysql-update", id, "--label", "cli-mysql-b", "--allow_list", "192.0.2.1",
      "--updates.frequency", "weekly", "--updates.day_of_week", "2", "--updates.hour_of_day", "4", "--updates.duration", "2");
    expect(updated).toMatchObject({ label: "cli-mysql-b", status: "updating", allow_list: ["192.0.2.1/32"],
      updates: { frequency: "weekly", day_of_week: 2, hour_of_day: 4, duration: 2 } });
    await settle(["databases", "mysql-view", id], "active");

    const [creds] = await cli("databases", "mysql-creds-view", id);
    expect(creds.username).toBe("linroot");
    expect(creds.password).toMatch(/^\S{8,}$/);
    const [ssl] = await cli("databases", "mysql-ssl-cert", id);
    expect(Buffer.from(ssl.ca_certificate as string, "base64").toString("utf8")).toMatch(/^-----BEGIN CERTIFICATE-----/);

    await cli("databases", "mysql-patch", id);
    expect((await cli("databases", "mysql-view", id))[0].status).toBe("updating");
    await settle(["databases", "mysql-view", id], "active");
    // The new password appears once the reset has taken effect.
    await cli("databases", "mysql-creds-reset", id);
    emu.advance(TRANSITION_SECONDS);
    const [after] = await cli("databases", "mysql-creds-view", id);
    expect(after.username).toBe("linroot");
    expect(after.password).not.toBe(creds.password);

    await cli("databases", "mysql-delete", id);
    const gone = await raw(["databases", "mysql-view", id]);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr + gone.stdout).toMatch(/404/);
  }, 300_000); // ~40 s alone; each CLI call starts Python, slow on a loaded machine

  it("the PostgreSQL lifecycle", async () => {
    const [created] = await cli("databases", "postgresql-create", "--label", "cli-pg", "--region", "us-east", "--type", "g6-nanode-1",
      "--engine", "postgresql/16", "--cluster_size", "3");
    expect(created).toMatchObject({ engine: "postgresql", version: "16", status: "provisioning", port: 5432, cluster_size: 3 });
    const id = String(created.id);
    const active = await settle(["databases", "postgresql-view", id], "active");
    expect(active.hosts.primary).toMatch(/-pgsql-primary\.servers\.linodedb\.net$/);
    expect(Object.values(active.members).sort()).toEqual(["failover", "failover", "primary"]);
    expect((await cli("databases", "postgresql-list")).map((d) => d.id)).toContain(created.id);
    expect((await cli("databases", "postgresql-update", id, "--label", "cli-pg-b"))[0]).toMatchObject({ label: "cli-pg-b", status: "active" });
    expect((await cli("databases", "postgresql-creds-view", id))[0].username).toBe("linpostgres");
    expect((await cli("databases", "postgresql-ssl-cert", id))[0].ca_certificate).toMatch(/^[A-Za-z0-9+/]+=*$/);
    await cli("databases", "postgresql-patch", id);
    expect((await cli("databases", "postgresql-view", id))[0].status).toBe("updating");
    await settle(["databases", "postgresql-view", id], "active");
    await cli("databases", "postgresql-creds-reset", id);
    await cli("databases", "postgresql-delete", id);
    expect((await cli("databases", "list")).map((d) => d.id)).not.toContain(created.id);
  }, 300_000); // ~40 s alone; each CLI call starts Python, slow on a loaded machine

  it("NodeBalancers, configs (http and https) and nodes, with rebuild", async () => {
    const [nb] = await cli("nodebalancers", "create", "--region", "us-east", "--label", "cli-nb", "--client_conn_throttle", "3",
      "--tags", "a", "--tags", "b");
    expect(nb).toMatchObject({ label: "cli-nb", region: "us-east", type: "common", client_conn_throttle: 3, tags: ["a", "b"],
      transfer: { in: null, out: null, total: null } });
    expect(nb.hostname).toBe(`${(nb.ipv4 as string).replaceAll(".", "-")}.ip.linodeusercontent.com`);
    const nbId = String(nb.id);
    expect((await cli("nodebalancers", "list")).map((n) => n.id)).toContain(nb.id);
    expect((await cli("nodebalancers", "view", nbId))[0].label).toBe("cli-nb");
    expect((await cli("nodebalancers", "update", nbId, "--label", "cli-nb-b"))[0].label).toBe("cli-nb-b");

    const [cfg] = await cli("nodebalancers", "config-create", nbId, "--port", "80", "--protocol", "http", "--algorithm", "roundrobin",
      "--check_interval", "60");
    expect(cfg).toMatchObject({ port: 80, protocol: "http", check_interval: 60, check_timeout: 30, check_attempts: 3, stickiness: "none",
      ssl_cert: null, ssl_key: null, nodes_status: { up: 0, down: 0 }, nodebalancer_id: nb.id });
    const cfgId = String(cfg.id);

    const { certPem, keyPem } = generateCertificate({ commonName: "cli.example.test" });
    const [tls] = await cli("nodebalancers", "config-create", nbId, "--port", "443", "--protocol", "https", "--ssl_cert", certPem, "--ssl_key", keyPem);
    expect(tls).toMatchObject({ protocol: "https", ssl_commonname: "cli.example.test", ssl_fingerprint: new X509Certificate(certPem).fingerprint,
      ssl_cert: "<REDACTED>", ssl_key: "<REDACTED>" });

    expect((await cli("nodebalancers", "configs-list", nbId)).map((c) => c.port).sort()).toEqual([443, 80]);
    expect((await cli("nodebalancers", "config-view", nbId, String(tls.id)))[0].ssl_fingerprint).toBe(tls.ssl_fingerprint);
    expect((await cli("nodebalancers", "config-update", nbId, cfgId, "--port", "8080", "--check_interval", "20", "--check_timeout", "10"))[0])
      .toMatchObject({ port: 8080, check_interval: 20, check_timeout: 10 });

    const [node] = await cli("nodebalancers", "node-create", nbId, cfgId, "--address", "192.168.210.5:80", "--label", "cli-node-a", "--weight", "30");
    expect(node).toMatchObject({ address: "192.168.210.5:80", label: "cli-node-a", weight: 30, mode: "accept", config_id: cfg.id, nodebalancer_id: nb.id });
    expect(String(node.status).toLowerCase()).toBe("unknown");
    const nodeId = String(node.id);
    expect((await cli("nodebalancers", "node-view", nbId, cfgId, nodeId))[0].label).toBe("cli-node-a");
    expect((await cli("nodebalancers", "node-update", nbId, cfgId, nodeId, "--mode", "drain", "--weight", "70"))[0])
      .toMatchObject({ mode: "drain", weight: 70 });
    // Any RFC 1918 address (a VPC), not only Linode's 192.168.128.0/17.
    const [extra] = await cli("nodebalancers", "node-create", nbId, cfgId, "--address", "192.168.10.5:80", "--label", "cli-node-x");
    expect(extra).toMatchObject({ address: "192.168.10.5:80" });
    await cli("nodebalancers", "node-delete", nbId, cfgId, String(extra.id));
    expect((await cli("nodebalancers", "nodes-list", nbId, cfgId)).map((n) => n.label)).toEqual(["cli-node-a"]);

    // Rebuild: node a kept by id (moved, relabelled), a new node added.
    const [rebuilt] = await cli("nodebalancers", "config-rebuild", nbId, cfgId, "--port", "8080", "--nodes", JSON.stringify([
      { id: node.id, address: "192.168.210.6:80", label: "cli-node-a2" },
      { address: "10.0.0.7:80", label: "cli-node-b" },
    ]));
    expect(rebuilt).toMatchObject({ id: cfg.id, port: 8080 });
    expect(rebuilt.nodes_status.up + rebuilt.nodes_status.down).toBe(2);
    const nodes = await cli("nodebalancers", "nodes-list", nbId, cfgId);
    expect(nodes.map((n) => n.label).sort()).toEqual(["cli-node-a2", "cli-node-b"]);
    expect(nodes.find((n) => n.label === "cli-node-a2")).toMatchObject({ id: node.id, address: "192.168.210.6:80" });

    await cli("nodebalancers", "config-delete", nbId, String(tls.id));
    expect((await cli("nodebalancers", "configs-list", nbId)).map((c) => c.id)).toEqual([cfg.id]);
    await cli("nodebalancers", "delete", nbId);
    expect((await cli("nodebalancers", "list")).map((n) => n.id)).not.toContain(nb.id);
  }, 300_000); // ~40 s alone; each CLI call starts Python, slow on a loaded machine

  it("runs from a config file alone, including a bare-token config that needs GET /profile", async () => {
    const base = { ...env };
    for (const key of ["LINODE_CLI_TOKEN", "LINODE_CLI_API_HOST", "LINODE_CLI_API_SCHEME", "LINODE_CLI_API_VERSION"]) Reflect.deleteProperty(base, key);
    const target = `api_host = 127.0.0.1:${String(emu.port)}\napi_scheme = http\napi_version = v4\n`;

    const modern = join(home, "modern.ini");
    writeFileSync(modern, `[DEFAULT]\ndefault-user = emulator\n\n[emulator]\ntoken = ${TOKEN}\n${target}`);
    const a = await raw(["databases", "engines"], { ...base, LINODE_CLI_CONFIG: modern });
    expect(a.code, a.stderr).toBe(0);
    expect(JSON.parse(a.stdout).length).toBeGreaterThan(0);

    // An old-style config with only [DEFAULT] token: the CLI asks GET /profile for the
    // username and rewrites the file. The URL overrides come from the environment here,
    // because this lookup happens before any user section (with api_host) exists.
    const legacy = join(home, "legacy.ini");
    writeFileSync(legacy, `[DEFAULT]\ntoken = ${TOKEN}\n`);
    const b = await raw(["nodebalancers", "list"], {
      ...base, LINODE_CLI_CONFIG: legacy, LINODE_CLI_API_HOST: `127.0.0.1:${String(emu.port)}`, LINODE_CLI_API_SCHEME: "http", LINODE_CLI_API_VERSION: "v4",
    });
    expect(b.code, b.stderr + b.stdout).toBe(0);
    expect(JSON.parse(b.stdout)).toEqual([]);
  }, 60_000);
});
