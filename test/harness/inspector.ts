// The memory of a child process started with --inspect=127.0.0.1:0, read after a full garbage
// collection asked through its inspector: what the process holds, with no waiting for V8's
// memory reducer (which makes the same collection some seconds after a process goes quiet).
import type { OperatorProcess } from "./operator-process.ts";

export interface Memory {
  /** Resident set, MiB. */
  rss: number;
  /** JavaScript heap in use plus memory outside it that JavaScript objects hold (Buffers), MiB. */
  held: number;
}

export interface Inspector {
  /** Collects every unreachable object (HeapProfiler.collectGarbage), then reads the process's memory. */
  collected(): Promise<Memory>;
  close(): void;
}

const MIB = 1024 * 1024;

/** Connects to the inspector the process announced on stderr ("Debugger listening on ws://…"). */
export async function inspect(p: OperatorProcess, timeoutMillis = 30_000): Promise<Inspector> {
  // Whole once a space or line end follows it (a chunk may end inside it).
  const announced = (): string | undefined => /(ws:\/\/\S+)\s/.exec(p.stderr.join(""))?.[1];
  const url = announced() ?? await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => { reject(new Error(`no inspector announced in ${String(timeoutMillis)} ms: ${p.stderr.join("")}`)); }, timeoutMillis);
    // After the harness's own listener: p.stderr has the chunk by then.
    const seen = (): void => { const u = announced(); if (u !== undefined) { clearTimeout(t); p.child.stderr?.off("data", seen); resolve(u); } };
    p.child.stderr?.on("data", seen);
  });
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => { ws.addEventListener("open", resolve, { once: true }); ws.addEventListener("error", reject, { once: true }); });
  const pending = new Map<number, (m: { result?: unknown; error?: { message: string } }) => void>();
  ws.addEventListener("message", (e) => {
    const m = JSON.parse(String(e.data)) as { id?: number; result?: unknown; error?: { message: string } };
    if (m.id !== undefined) { pending.get(m.id)?.(m); pending.delete(m.id); }
  });
  let next = 0;
  const call = <T>(method: string, params: Record<string, unknown> = {}): Promise<T> => new Promise((resolve, reject) => {
    const id = ++next;
    pending.set(id, (m) => { if (m.error !== undefined) reject(new Error(`${method}: ${m.error.message}`)); else resolve(m.result as T); });
    ws.send(JSON.stringify({ id, method, params }));
  });
  return {
    async collected() {
      await call("HeapProfiler.collectGarbage");
      const r = await call<{ result: { value: string } }>("Runtime.evaluate", { expression: "JSON.stringify(process.memoryUsage())", returnByValue: true });
      const u = JSON.parse(r.result.value) as { rss: number; heapUsed: number; external: number };
      return { rss: u.rss / MIB, held: (u.heapUsed + u.external) / MIB };
    },
    close() { ws.close(); },
  };
}
