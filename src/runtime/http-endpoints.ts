// /healthz, /readyz and /metrics over plain node:http. Probes must answer even while the
// event loop is busy reconciling, so they do no I/O of their own.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

export interface Probe { name: string; check: () => string | undefined /* undefined = ok, else why not */ }

export async function serveEndpoints(opts: {
  port: number;
  host?: string;
  registry?: Registry;
  liveness?: Probe[];
  readiness?: Probe[];
}): Promise<{ server: Server; port: number; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const probe = (probes: Probe[] | undefined): void => {
      const failing = (probes ?? []).flatMap((p) => { const why = p.check(); return why === undefined ? [] : [`${p.name}: ${why}`]; });
      res.writeHead(failing.length === 0 ? 200 : 503, { "content-type": "text/plain; charset=utf-8" });
      res.end(failing.length === 0 ? "ok\n" : `${failing.join("\n")}\n`);
    };
    if (path === "/healthz" || path === "/livez") return probe(opts.liveness);
    if (path === "/readyz") return probe(opts.readiness);
    if (path === "/metrics" && opts.registry !== undefined) {
      const registry = opts.registry;
      registry.metrics().then((body) => {
        res.writeHead(200, { "content-type": registry.contentType });
        res.end(body);
      }, (err: unknown) => {
        res.writeHead(500);
        res.end(String(err));
      });
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found\n");
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host ?? "0.0.0.0", () => { resolve(); });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    server, port,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => { resolve(); }); }),
  };
}
