// Counts the Linode API calls a client made, from its own Prometheus counter.
import type { LinodeClient } from "../../src/linode/index.ts";

/** `route`: a part of the route template, or all of it with `exact`. */
export async function linodeCalls(client: LinodeClient, filter: { method?: string; route?: string; exact?: boolean; status?: string } = {}): Promise<number> {
  const metric = await client.metrics.requests.get();
  return metric.values
    .filter((v) => (filter.method === undefined || v.labels.method === filter.method) && (filter.route === undefined || (filter.exact === true ? String(v.labels.route) === filter.route : String(v.labels.route).includes(filter.route)))
      && (filter.status === undefined || String(v.labels.status) === filter.status))
    .reduce((n, v) => n + v.value, 0);
}
