// An HTTPS proxy on loopback in front of the API server that can stall: from stall() on, no
// request gets an answer and no more of a response (a watch's stream) is passed on, while
// every connection stays open. That is a hung API server (a partition, a dead middlebox), not
// a refused one: the client learns nothing until its own timeouts fire. It terminates TLS
// with the API server's own certificate, so clients verify it as they would the server.
import { createServer, request as httpsRequest } from "node:https";
import type { AddressInfo, Socket } from "node:net";

export interface StallingProxy {
  port: number;
  stall(): void;
  close(): Promise<void>;
}

export async function startStallingProxy(opts: { target: string; ca: string; cert: string; key: string }): Promise<StallingProxy> {
  const target = new URL(opts.target);
  let stalled = false;
  const sockets = new Set<Socket>();
  const server = createServer({ cert: opts.cert, key: opts.key }, (req, res) => {
    if (stalled) return; // held forever
    const upstream = httpsRequest({
      host: target.hostname, port: target.port, method: req.method, path: req.url, ca: opts.ca,
      headers: { ...req.headers, host: target.host },
    }, (up) => {
      if (stalled) return;
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.on("data", (chunk: Buffer) => { if (!stalled) res.write(chunk); });
      up.on("end", () => { if (!stalled) res.end(); });
    });
    upstream.on("error", () => { if (!stalled) res.destroy(); });
    req.on("data", (chunk: Buffer) => { upstream.write(chunk); });
    req.on("end", () => { upstream.end(); });
  });
  server.on("connection", (s: Socket) => { sockets.add(s); s.on("close", () => sockets.delete(s)); });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    stall: () => { stalled = true; },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => { resolve(); }));
    },
  };
}
