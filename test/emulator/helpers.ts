// Shared test plumbing: start an emulator on a free loopback port and talk to it over real
// HTTP with fetch.
import { startEmulator, type EmulatorOptions, type RunningEmulator } from "../../src/emulator/index.ts";

export const TOKEN = "test-token";

export interface ApiResponse {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- assertions read arbitrary JSON
  headers: Headers;
}

export async function start(opts: EmulatorOptions = {}): Promise<RunningEmulator> {
  return startEmulator({ tokens: [TOKEN], timeScale: 0, ...opts });
}

export interface CallOptions {
  token?: string | null;
  headers?: Record<string, string>;
  raw?: string;
}

export async function call(base: string, method: string, path: string, body?: unknown, opts: CallOptions = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  const token = opts.token === undefined ? TOKEN : opts.token;
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  let payload: string | undefined;
  if (opts.raw !== undefined) payload = opts.raw;
  else if (body !== undefined) payload = JSON.stringify(body);
  if (payload !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(`${base}${path}`, { method, headers, body: payload ?? null });
  const text = await res.text();
  const parsed: unknown = text === "" ? undefined : JSON.parse(text);
  return { status: res.status, body: parsed, headers: res.headers };
}

/** A client bound to one emulator (and optionally one token). */
export function client(emu: RunningEmulator, token?: string | null) {
  const opts = (o: CallOptions = {}): CallOptions => (token === undefined ? o : { token, ...o });
  return {
    get: (path: string, o?: CallOptions) => call(emu.url, "GET", path, undefined, opts(o)),
    post: (path: string, body?: unknown, o?: CallOptions) => call(emu.url, "POST", path, body, opts(o)),
    put: (path: string, body?: unknown, o?: CallOptions) => call(emu.url, "PUT", path, body, opts(o)),
    del: (path: string, o?: CallOptions) => call(emu.url, "DELETE", path, undefined, opts(o)),
    admin: (method: string, path: string, body?: unknown) => call(emu.adminUrl, method, path, body, { token: null }),
  };
}

export function fields(res: ApiResponse): (string | undefined)[] {
  return (res.body as { errors: { field?: string }[] }).errors.map((e) => e.field);
}

export const mysqlBody = (over: Record<string, unknown> = {}) => ({
  label: `db-${Math.random().toString(36).slice(2, 10)}`, region: "us-east", type: "g6-nanode-1", engine: "mysql/8", ...over,
});

export const pgBody = (over: Record<string, unknown> = {}) => ({
  label: `pg-${Math.random().toString(36).slice(2, 10)}`, region: "us-east", type: "g6-nanode-1", engine: "postgresql/16", ...over,
});
