// Shared set-up for the client's HTTP tests: a real emulator on loopback, a client with a
// private metrics registry, and a pino logger at debug whose output is captured.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
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

export function makeClient(emu: Pick<Emulator, "url">, opts: Partial<LinodeClientOptions> = {}): TestClient {
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

export interface ScriptedServer {
  url: string;
  /** "METHOD /path" of every request that reached the server, in order. */
  received: string[];
  close(): Promise<void>;
}

/**
 * A bare HTTP server on loopback, for answers the emulator never gives (a 2xx that does not
 * parse, a 5xx that spends the budget): `answer` gets the request's number, from 1.
 */
export async function startScriptedServer(answer: (n: number, req: IncomingMessage, res: ServerResponse) => void): Promise<ScriptedServer> {
  const received: string[] = [];
  const server = createServer((req, res) => {
    const n = received.push(`${req.method ?? "?"} ${req.url ?? "?"}`);
    req.resume();
    req.on("end", () => { answer(n, req, res); });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${String(port)}/v4`,
    received,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => { resolve(); });
    }),
  };
}

/** A loopback port nothing listens on (it was free a moment ago), for refused connections. */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => { resolve(); }));
  return `http://127.0.0.1:${String(port)}/v4`;
}

/** Sends a JSON answer with a status and extra headers. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(typeof body === "string" ? body : JSON.stringify(body));
}
