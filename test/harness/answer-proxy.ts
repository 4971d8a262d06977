// A loopback proxy before the Linode API emulator that rewrites its JSON answers, for tests of
// what the operator does with answers the real API could give (or a man in the middle could);
// and that can hold requests in flight until the test lets them through, so a test orders what
// the operator does around a request it sent (a barrier, not a wait).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A request the proxy holds: not forwarded until released. */
export interface HeldRequest { method: string; path: string; body: string }

export interface AnswerProxy {
  /** The proxy's API URL (`http://127.0.0.1:PORT/v4`). */
  url: string;
  /** Answers rewritten so far. */
  rewritten(): number;
  /** From now on, requests `match` picks are held, unanswered, until release(). */
  hold(match: (method: string, path: string) => boolean): void;
  /** The requests held now, in arrival order. */
  held(): readonly HeldRequest[];
  /** Resolves once `count` requests are held. */
  whenHeld(count: number): Promise<void>;
  /** Forwards the held requests and holds none from now on. */
  release(): void;
  close(): Promise<void>;
}

/**
 * Forwards every request to `targetUrl`'s origin; a 2xx JSON answer is replaced by what
 * `rewrite` returns for it (undefined: as it was).
 */
export async function startAnswerProxy(targetUrl: string, rewrite: (method: string, path: string, body: unknown) => string | undefined = () => undefined): Promise<AnswerProxy> {
  const origin = new URL(targetUrl).origin;
  let count = 0;
  let holding: ((method: string, path: string) => boolean) | undefined;
  const held: { request: HeldRequest; go: () => void }[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.setEncoding("utf8").on("data", (c: string) => { body += c; });
    req.on("end", () => {
      void (async () => {
        const path = new URL(req.url ?? "/", "http://x").pathname;
        if (holding?.(req.method ?? "GET", path) === true) {
          await new Promise<void>((go) => {
            held.push({ request: { method: req.method ?? "GET", path, body }, go });
            for (const w of waiters) w();
          });
        }
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string" && k !== "host" && k !== "content-length" && k !== "connection") headers[k] = v;
        const answer = await fetch(`${origin}${req.url ?? ""}`, { method: req.method ?? "GET", headers, ...(body !== "" ? { body } : {}) });
        let text = await answer.text();
        if (answer.status >= 200 && answer.status < 300 && text.trim() !== "") {
          const rewritten = rewrite(req.method ?? "GET", path, JSON.parse(text) as unknown);
          if (rewritten !== undefined) {
            text = rewritten;
            count++;
          }
        }
        const out: Record<string, string> = { "content-type": "application/json" };
        answer.headers.forEach((v, k) => { if (k.startsWith("x-ratelimit") || k === "retry-after") out[k] = v; });
        res.writeHead(answer.status, out);
        res.end(text);
      })().catch((err: unknown) => {
        res.writeHead(502);
        res.end(String(err));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${String(port)}/v4`,
    rewritten: () => count,
    hold: (match) => { holding = match; },
    held: () => held.map((h) => h.request),
    whenHeld: (target) => new Promise<void>((resolve) => {
      const check = (): void => {
        if (held.length < target) return;
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
      check();
    }),
    release: () => {
      holding = undefined;
      for (const h of held.splice(0)) h.go();
    },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => { resolve(); }); }),
  };
}
