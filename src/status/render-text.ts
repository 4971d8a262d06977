// `status` as text for people: kubectl-like tables (columns two spaces apart), colour only on
// a terminal (and never with NO_COLOR).
import { stripVTControlCharacters } from "node:util";
import type { CloudObjectView, CloudSide } from "./cloud-side.ts";
import type { NotReadyReport, ObjectReport } from "./report.ts";

export interface Paint { good(s: string): string; bad(s: string): string; warn(s: string): string; bold(s: string): string }

const plain: Paint = { good: (s) => s, bad: (s) => s, warn: (s) => s, bold: (s) => s };
const sgr = (code: string) => (s: string): string => `\u001b[${code}m${s}\u001b[0m`;
const colours: Paint = { good: sgr("32"), bad: sgr("31"), warn: sgr("33"), bold: sgr("1") };

/** Colours for a terminal that wants them; none otherwise. */
export function paintFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): Paint {
  return stream.isTTY === true && (env.NO_COLOR ?? "") === "" && env.TERM !== "dumb" ? colours : plain;
}

/** Rows as columns padded to their widest cell (by visible width: colour codes do not count). */
export function table(rows: string[][], indent = "  "): string[] {
  const visible = (s: string): number => stripVTControlCharacters(s).length;
  const widths: number[] = [];
  for (const r of rows) r.forEach((cell, i) => { widths[i] = Math.max(widths[i] ?? 0, visible(cell)); });
  return rows.map((r) => indent + r.map((cell, i) => (i === r.length - 1 ? cell : cell + " ".repeat((widths[i] ?? 0) - visible(cell)))).join("  ").trimEnd());
}

const statusPaint = (p: Paint, status: string): string => (status === "True" ? p.good(status) : status === "False" ? p.bad(status) : p.warn(status));

export function renderObject(r: ObjectReport, p: Paint = plain): string {
  const out: string[] = [];
  out.push(p.bold(`${r.kind} ${r.namespace}/${r.name}`) + `  (age ${r.age}${r.generation !== undefined ? `, generation ${String(r.generation)}` : ""}${r.deleting ? ", being deleted" : ""})`);
  if (r.shard !== undefined) out.push(`Shard: ${r.shard.name}${r.shard.draining ? " (draining: it lets go of this object, which then moves to another shard)" : " (the operator replica that works on it)"}`);
  out.push("", p.bold("Conditions:"));
  if (r.conditions.length === 0) out.push("  none reported yet");
  else out.push(...table([["TYPE", "STATUS", "REASON", "AGE", "MESSAGE"], ...r.conditions.map((c) => [c.type, statusPaint(p, c.status), c.reason, c.age, c.message ?? ""])]));

  out.push("", p.bold("Events:"));
  if (!Array.isArray(r.events)) out.push(`  cannot be read: ${r.events.error}`);
  else if (r.events.length === 0) out.push("  none (Events expire after an hour on most clusters)");
  else out.push(...table([["TYPE", "REASON", "AGE", "FROM", "MESSAGE"], ...r.events.map((e) => [e.type === "Warning" ? p.warn(e.type) : e.type, e.reason, e.count > 1 ? `${e.age} (x${String(e.count)})` : e.age, e.from, e.note])]));

  out.push("", p.bold("Cloud object (Linode API):"));
  out.push(...renderCloud(r.cloud, p));
  if (r.tokenNote !== undefined) out.push(`  note: ${r.tokenNote}`);

  if (r.connectionSecret !== undefined) {
    const s = r.connectionSecret;
    out.push("", p.bold(`Connection Secret ${s.name}:`));
    if ("keys" in s) out.push(`  keys: ${s.keys.join(", ")}  (values not shown: kubectl get secret ${s.name} -o jsonpath='{.data.host}' | base64 -d)`);
    else if ("missing" in s) out.push("  not there (yet): the operator writes it once the cloud object is ready");
    else out.push(`  cannot be read: ${s.error}`);
  }

  out.push("", p.bold("Next:"));
  out.push(`  ${r.next.what}`, `  when: ${r.next.when}`, `  from: ${r.next.basis}`);
  return `${out.join("\n")}\n`;
}

function renderCloud(c: CloudSide, p: Paint): string[] {
  switch (c.state) {
    case "none": return [`  none: ${c.why}`];
    case "needsToken": return [`  not read: ${c.why}`];
    case "error": return [`  token from ${c.tokenFrom}`, `  ${p.bad("could not be read")}: ${c.error}`];
    case "shown": return [`  token from ${c.tokenFrom}`, ...renderView(c.object, p)];
  }
}

function renderView(v: CloudObjectView, p: Paint): string[] {
  switch (v.kind) {
    case "database": {
      const rows = [
        ["Database", `${String(v.id)} (${v.label})`],
        ["Status", v.status === "active" ? p.good(v.status) : p.warn(v.status)],
        ["Platform", v.platform],
        ["Engine", `${v.engine} ${v.version}`],
        ["Region / type", `${v.region} / ${v.type}`],
        ["Nodes", String(v.clusterSize)],
        ["Primary host", v.hosts.primary ?? "(none yet)"],
        ...(v.hosts.secondary !== null ? [["Secondary host", v.hosts.secondary]] : []),
        ["Port", v.port !== null ? String(v.port) : "(none yet)"],
        ["Allow list", v.allowList.length > 0 ? v.allowList.join(", ") : "(empty: no one may connect)"],
        ...(v.pendingUpdates.length > 0 ? [["Pending updates", v.pendingUpdates.join("; ")]] : []),
        ["Updated", v.updated],
      ];
      const members = v.members.length > 0 ? ["  Members:", ...table(v.members.map((m) => [m.address, m.role]), "    ")] : [];
      return [...table(rows), ...members];
    }
    case "snapshot":
      return table([["Backup", `${String(v.backupId)} (${v.label})`], ["Of database", String(v.databaseId)], ["Type", v.type], ["Created", v.created]]);
    case "pool":
      return table([["Pool", `${v.label} (of database ${String(v.databaseId)})`], ["Database", v.database], ["Mode", v.mode], ["Size", String(v.size)], ["User", v.username ?? "(the inbound user)"]]);
    case "nodeBalancer": {
      const rows = table([["NodeBalancer", `${String(v.id)} (${v.label})`], ["Region", v.region], ["Hostname", v.hostname ?? ""], ["IPv4", v.ipv4 ?? ""], ["IPv6", v.ipv6 ?? ""]]);
      const configs = v.configs.flatMap((c) => [
        `  Port ${String(c.port)} (${c.protocol}, ${c.algorithm}, check ${c.check}): ${p.good(`${String(c.up)} up`)}, ${c.down > 0 ? p.bad(`${String(c.down)} down`) : "0 down"}`,
        ...(c.backends.length === 0 ? ["    no backends"] : table([["BACKEND", "ADDRESS", "STATUS", "WEIGHT", "MODE"], ...c.backends.map((b) => [b.label, b.address, b.status === "UP" ? p.good(b.status) : b.status === "DOWN" ? p.bad(b.status) : b.status, String(b.weight), b.mode])], "    ")),
      ]);
      return [...rows, ...(v.configs.length === 0 ? ["  no configs"] : configs)];
    }
  }
}

export function renderNotReady(r: NotReadyReport, allNamespaces: boolean, namespace: string, p: Paint = plain): string {
  const out: string[] = [];
  for (const u of r.unlisted) out.push(`${p.warn("warning")}: ${u.kind} not listed: ${u.why}`);
  if (r.notReady.length === 0) {
    out.push(`Every ManagedDatabase, DatabaseSnapshot, NodeBalancer and DatabaseConnectionPool ${allNamespaces ? "in every namespace" : `in namespace ${namespace}`} is Ready.`);
    return `${out.join("\n")}\n`;
  }
  const head = allNamespaces ? ["NAMESPACE", "NAME", "REASON", "AGE", "MESSAGE"] : ["NAME", "REASON", "AGE", "MESSAGE"];
  const rows = r.notReady.map((l) => {
    const name = `${kindRef(l.kind)}/${l.name}`;
    const cells = [name, p.bad(l.reason), l.age, oneLine(l.message)];
    return allNamespaces ? [l.namespace, ...cells] : cells;
  });
  out.push(...table([head, ...rows], ""));
  return `${out.join("\n")}\n`;
}

/** How kubectl names a kind in `kind/name`: its lower-case singular with the group left out. */
const kindRef = (kind: string): string => kind.toLowerCase();
const oneLine = (s: string): string => s.replace(/\s+/g, " ");
