// Shared set-up for the client's HTTP tests: a real emulator on loopback, a client with a
// private metrics registry, and a pino logger at debug whose output is captured.
import { Writable } from "node:stream";
import { pino } from "pino";
import { Registry } from "prom-client";
import { startEmulator } from "../../src/emulator/index.ts";
import { LinodeClient, type LinodeClientOptions } from "../../src/linode/index.ts";

export const TOKEN = "test-token";

export type Emulator = Awaited<ReturnType<typeof startEmulator>>;

export function startTestEmulator(opts: Partial<Parameters<typeof startEmulator>[0]> = {}): Promise<Emulator> {
  return startEmulator({ port: 0, tokens: [TOKEN], provisionSeconds: 0.05, ...opts });
}

export interface TestClient {
  client: LinodeClient;
  registry: Registry;
  logs: string[];
}

export function makeClient(emu: Emulator, opts: Partial<LinodeClientOptions> = {}): TestClient {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(chunk.toString("utf8"));
      cb();
    },
  });
  const registry = new Registry();
  const logger = pino({ level: "debug" }, sink);
  const client = new LinodeClient({ token: TOKEN, baseUrl: emu.url, registry, logger, retry: { baseDelayMs: 20, maxDelayMs: 200 }, ...opts });
  return { client, registry, logs };
}

/** Polls `check` until it returns a value (not undefined) or the deadline passes. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

let seq = 0;
/** Unique, valid labels (3..32 chars, letters/digits/dashes). */
export function label(prefix: string): string {
  seq += 1;
  return `${prefix}-${process.pid % 10000}-${seq}`.slice(0, 32);
}

export async function metricValue(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = await registry.getSingleMetric(name)?.get();
  if (!metric) return 0;
  return metric.values
    .filter((v) => Object.entries(labels).every(([k, want]) => String((v.labels as Record<string, unknown>)[k]) === want))
    .reduce((sum, v) => sum + v.value, 0);
}
