// At startup the operator waits for an API server it cannot reach instead of exiting. A
// replica gives up its lease and exits when it cannot renew it (an API server outage); the
// kubelet restarts it at once, and if it exited again because the API server is still down,
// the kubelet's back-off (doubling to 5 min) would keep it down for minutes after the API
// server is back: a crash loop. For the same reason it answers liveness probes meanwhile
// (`whileWaiting`): a kubelet that sees none kills it. Credentials or permissions the API
// server refuses (any other HTTP status) still fail at once.
import { KubeApiError, errorChain } from "./errors.ts";

export interface WaitLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/** Transport failures, 429 and 5xx: the API server is down, starting or overloaded, not refusing us. */
export function isUnreachable(err: unknown): boolean {
  return !(err instanceof KubeApiError) || err.code === 429 || err.code >= 500;
}

export interface WaitOptions {
  maxDelayMillis?: number;
  logEveryMillis?: number;
  sleep?: (ms: number) => Promise<void>;
  /** Started at the first failure, closed once the API server answers (or refuses). */
  whileWaiting?: () => Promise<{ close: () => Promise<void> }>;
}

export async function waitForApiServer(ping: () => Promise<void>, log: WaitLog, opts: WaitOptions = {}): Promise<void> {
  const maxDelay = opts.maxDelayMillis ?? 5_000;
  const logEvery = opts.logEveryMillis ?? 30_000;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const since = Date.now();
  let lastLogged = Number.NEGATIVE_INFINITY;
  let meanwhile: { close: () => Promise<void> } | undefined;
  try {
    for (let attempt = 0; ; attempt++) {
      let failure: unknown;
      try {
        await ping();
        if (attempt > 0) log.info({ waitedMillis: Date.now() - since, attempts: attempt + 1 }, "Kubernetes API server reachable");
        return;
      } catch (err) {
        if (!isUnreachable(err)) throw err;
        failure = err;
      }
      meanwhile ??= await opts.whileWaiting?.();
      const delay = Math.min(maxDelay, 500 * 2 ** attempt);
      // One line now and then, not one per attempt.
      if (Date.now() - lastLogged >= logEvery) {
        lastLogged = Date.now();
        log.warn({ err: errorChain(failure), waitedMillis: Date.now() - since, retryInMillis: delay }, "Kubernetes API server not reachable; waiting for it");
      }
      await sleep(delay);
    }
  } finally {
    await meanwhile?.close();
  }
}
