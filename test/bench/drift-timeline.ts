// The operator's calls around a drift, from the emulator's request log: which list found the
// change, when the object's own read and write went, how long each took.
import type { RequestRecord } from "../../src/emulator/request-log.ts";

/** The operator names its replica in its User-Agent ("linode-operator (pod)"); the bench's own client does not. */
const isOperator = (r: RequestRecord): boolean => r.userAgent.startsWith("linode-operator (");

/** A list ("…?") matches with any query; an object's path matches itself and what hangs off it, not another id that starts alike. */
const matches = (path: string, p: string): boolean => (p.endsWith("?") ? path.startsWith(p) || path === p.slice(0, -1) : path === p || path.startsWith(`${p}/`) || path.startsWith(`${p}?`));

/** Rows [seconds after `zero`, "METHOD path", status, took ms, what] for operator requests since `from` whose path starts with one of a subject's. */
export function driftTimeline(requests: readonly RequestRecord[], from: number, subjects: { what: string; paths: string[] }[], zero = from): (string | number)[][] {
  const rows: (string | number)[][] = [];
  for (const r of requests) {
    if (r.receivedAt < from || !isOperator(r)) continue;
    const path = r.path.replace(/^\/v4(beta)?/, "");
    const subject = subjects.find((s) => s.paths.some((p) => matches(path, p)));
    if (subject === undefined) continue;
    rows.push([Math.round((r.receivedAt - zero) / 100) / 10, `${r.method} ${path}`, r.status, r.answeredAt - r.receivedAt, subject.what]);
  }
  return rows;
}
