// Prometheus metrics of the Linode client. The registry is always passed in (or a private
// one is made) so tests and several clients never collide on the global registry.
import { Counter, Gauge, Histogram, Registry, type Metric } from "prom-client";

export interface LinodeClientMetrics {
  registry: Registry;
  requests: Counter<"route" | "method" | "status">;
  duration: Histogram<"route" | "method">;
  rateLimitRemaining: Gauge<"account" | "group">;
  rateLimitOwn: Gauge<"account" | "group">;
  retries: Counter<"route" | "method" | "reason">;
  rateLimitWait: Histogram<"group">;
}

export function createLinodeClientMetrics(registry: Registry = new Registry()): LinodeClientMetrics {
  const registers = [registry];
  // A second client on the same registry (e.g. one per token) shares the series.
  const reuse = <M extends Metric>(name: string, make: () => M): M => (registry.getSingleMetric(name) as M | undefined) ?? make();
  return {
    registry,
    requests: reuse("linode_api_requests_total", () => new Counter({
      name: "linode_api_requests_total",
      help: "Linode API requests by route template, method and HTTP status (or transport error code).",
      labelNames: ["route", "method", "status"],
      registers,
    })),
    duration: reuse("linode_api_request_duration_seconds", () => new Histogram({
      name: "linode_api_request_duration_seconds",
      help: "Linode API request latency per attempt, by route template and method.",
      labelNames: ["route", "method"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    })),
    rateLimitRemaining: reuse("linode_api_ratelimit_remaining", () => new Gauge({
      name: "linode_api_ratelimit_remaining",
      help: "Requests left in the current Linode rate-limit window (X-RateLimit-Remaining, else the client bucket), by account (a hash of its token) and route class.",
      labelNames: ["account", "group"],
      registers,
    })),
    rateLimitOwn: reuse("linode_api_ratelimit_own", () => new Gauge({
      name: "linode_api_ratelimit_own",
      help: "Requests a window this process allows itself, by account (a hash of its token) and route class: its share of the API's limit; for a class whose answers report no remaining of their own (list), divided among the shards that spend the operator's token.",
      labelNames: ["account", "group"],
      registers,
    })),
    retries: reuse("linode_api_retries_total", () => new Counter({
      name: "linode_api_retries_total",
      help: "Retried Linode API attempts by route template, method and reason (rateLimited, transient).",
      labelNames: ["route", "method", "reason"],
      registers,
    })),
    // By class only: with an account label, 50 tokens would make 2,750 series.
    rateLimitWait: reuse("linode_api_ratelimit_wait_seconds", () => new Histogram({
      name: "linode_api_ratelimit_wait_seconds",
      help: "How long each request attempt waited for this process's own rate-limit budget before it was sent (0 when a token was free), by route class.",
      labelNames: ["group"],
      buckets: [0.01, 0.1, 1, 5, 15, 30, 60, 120],
      registers,
    })),
  };
}
