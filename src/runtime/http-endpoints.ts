// /healthz, /readyz and /metrics over plain node:http. Probes must answer even while the
// event loop is busy reconciling, so they do no I/O of their own.
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

export interface Probe { name: string; check: () => string | undefined /* undefined = ok, else why not */ }

/**
 * `host`: the address to listen on, or several separated by commas, all on one port (the chart
 * passes the pod's IP, where the kubelet and Prometheus connect, and 127.0.0.1, where
 * `kubectl port-forward` connects inside the pod). Default 0.0.0.0.
 */
export async function serveEndpoints(opts: {
  port: number;
  host?: string;
  registry?: Registry;
  liveness?: Probe[];
  readiness?: Probe[];
}): Promise<{ servers: Server[]; port: number; close: () => Promise<void> }> {
  const hosts = (opts.host ?? "0.0.0.0").split(",").map((h) => h.trim()).filter((h) => h !== "");
  if (hosts.length === 0) throw new Error(`no address to listen on in ${JSON.stringify(opts.host)}`);
  const handler: RequestListener = (req, res) => {
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
  };
  const close = (server: Server): Promise<void> => new Promise((resolve) => { server.closeAllConnections(); server.close(() => { resolve(); }); });
  const servers: Server[] = [];
  // Port 0 picks a free port for the first address; the others then take the same one.
  let port = opts.port;
  for (const host of hosts) {
    const server = createServer(handler);
    server.keepAliveTimeout = 5_000;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => { resolve(); });
      });
    } catch (err) {
      // Half a set of listeners would leave the probes answering where nobody asked for them.
      await Promise.all(servers.map(close));
      throw new Error(`cannot listen on ${host}:${String(port)}: ${(err as Error).message}`, { cause: err });
    }
    servers.push(server);
    port = (server.address() as AddressInfo).port;
  }
  return { servers, port, close: async () => { await Promise.all(servers.map(close)); } };
}
