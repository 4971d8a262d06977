// The API server's own count of the writes made to what the operator manages
// (apiserver_request_total, read from its /metrics), which the idle-state targets hold at 0.
// A count that could not be read is no data, never 0 writes: an answer other than 200 (a token
// without the metrics permission gets 403) or a page without the counter at all.
import { readFile } from "node:fs/promises";
import { Agent, fetch } from "undici";
import type { ControlPlane } from "../harness/control-plane.ts";
import { parseSamples } from "./metrics.ts";

const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE", "APPLY"]);

/** Writes to `resources` by "VERB resource[/subresource]", from one /metrics answer; undefined when it holds no count. */
export function writesFrom(status: number, text: string, resources: readonly string[]): Map<string, number> | undefined {
  if (status !== 200) return undefined;
  const samples = parseSamples(text).filter((s) => s.name === "apiserver_request_total");
  // The counter always has series (every request the API server served): none is a page that is not its metrics.
  if (samples.length === 0) return undefined;
  const out = new Map<string, number>();
  for (const s of samples) {
    const verb = s.labels.get("verb") ?? "", resource = s.labels.get("resource") ?? "", sub = s.labels.get("subresource") ?? "";
    if (!WRITES.has(verb) || !resources.includes(resource)) continue;
    const key = `${verb} ${resource}${sub !== "" ? `/${sub}` : ""}`;
    out.set(key, (out.get(key) ?? 0) + s.value);
  }
  return out;
}

/** The API server's write counts now (see writesFrom). */
export async function apiserverWrites(cp: ControlPlane, resources: readonly string[]): Promise<Map<string, number> | undefined> {
  const dispatcher = new Agent({ connect: { ca: await readFile(cp.caFile, "utf8") } });
  try {
    const res = await fetch(`${cp.server}/metrics`, { headers: { authorization: `Bearer ${cp.adminToken}` }, dispatcher });
    return writesFrom(res.status, await res.text(), resources);
  } finally {
    await dispatcher.close();
  }
}

/** Writes between two readings, in all and by key (those that moved); undefined when either reading is. */
export function writesBetween(before: Map<string, number> | undefined, after: Map<string, number> | undefined): { total: number; byKey: [string, number][] } | undefined {
  if (before === undefined || after === undefined) return undefined;
  const byKey = [...after].map(([k, v]): [string, number] => [k, v - (before.get(k) ?? 0)]).filter(([, v]) => v > 0);
  return { total: byKey.reduce((a, [, v]) => a + v, 0), byKey };
}
