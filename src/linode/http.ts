// The transport: one keep-alive undici Pool per client, every request bounded by
// connect/headers/body timeouts and the caller's AbortSignal, paced by the rate limiter,
// retried by one policy, measured, logged (redacted), and converted between the wire's
// snake_case and the client's camelCase exactly here.
import { Pool, type Dispatcher } from "undici";
import type { z } from "zod";
import { readAnswer } from "./answer.ts";
import { camelize, snakify, type Camelize } from "./case.ts";
import { ConnectionSlots } from "./connection-slots.ts";
import {
  LinodeApiError, LinodeError, LinodeTransportError, transportError, type ApiErrorItem,
} from "./errors.ts";
import { serializeFilter, type FilterObject } from "./filter.ts";
import { createLinodeClientMetrics, type LinodeClientMetrics } from "./metrics.ts";
import { tokenId } from "./token-id.ts";
import { parseRateLimitHeaders, RateLimiter, type BucketPart, type RateLimiterOptions, type TokenBucket } from "./rate-limiter.ts";
import { redact } from "./redact.ts";
import { backoffDelay, defaultRetryPolicy, isRetryable, sleep, type RetryPolicy } from "./retry.ts";
import { apiErrorBodySchema } from "./schemas/common.ts";
import type { Registry } from "prom-client";

export const DEFAULT_BASE_URL = "https://api.linode.com/v4";
const DEFAULT_CONNECTIONS = 16;

/** The subset of a pino logger the client uses (pino's Logger satisfies it). */
export interface ClientLogger {
  debug(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

const silentLogger: ClientLogger = { debug: () => undefined, warn: () => undefined };

export interface TimeoutOptions {
  /** TCP/TLS connect. */
  connectMs: number;
  /** Until the response headers arrive. */
  headersMs: number;
  /** Between body chunks. */
  bodyMs: number;
}

export interface LinodeClientOptions {
  token: string;
  /** Default https://api.linode.com/v4 (callers pass LINODE_API_URL). */
  baseUrl?: string;
  userAgent?: string;
  /**
   * Pool size for the API origin (default 16), and so how many requests this client has in
   * flight at once, with a `dispatcher` of the caller's too: the rest wait unsent.
   */
  connections?: number;
  /** Bring your own undici dispatcher (Agent, Pool, MockAgent...); the client won't close it. */
  dispatcher?: Dispatcher;
  timeouts?: Partial<TimeoutOptions>;
  retry?: Partial<RetryPolicy>;
  /** `false` disables client-side pacing (server 429s are still honoured). */
  rateLimit?: false | RateLimiterOptions | RateLimiter;
  logger?: ClientLogger;
  /** Where the client registers its metrics; a private registry if omitted. */
  registry?: Registry;
  metrics?: LinodeClientMetrics;
  /**
   * Runs each wait before a retry (a 429's Retry-After, a failure's backoff); default: the wait
   * alone. The operator lends the waiting reconcile's turn to another meanwhile (runtime/lent-turns.ts).
   */
  aroundRetryWait?: (wait: () => Promise<void>) => Promise<void>;
}

export interface CallOptions {
  /** Aborts the call, including any backoff or rate-limit wait (e.g. on shutdown). */
  signal?: AbortSignal;
  /** Per-call override of the retry policy (e.g. `{maxAttempts: 1}` for a probe). */
  retry?: Partial<RetryPolicy>;
  /**
   * A list that serves many objects at once (a sweep). Sweeps and the lists one object waits on
   * (a lookup after a lost create, a snapshot's backups, a NodeBalancer's configs) each leave the
   * other part of the paginated class what it used in the last window and a little more
   * (BucketPart), up to SWEEP_RESERVE and OBJECT_LIST_RESERVE of it: lookups waited up to a
   * minute behind sweeps at a 1 s poll, and at a 10 s drift window the configs lists of 200
   * NodeBalancers held the databases' sweep, and the drift it finds, for half a minute.
   */
  sweep?: boolean;
  /**
   * A look nothing says is needed now (a settled NodeBalancer's health counts, read on the drift
   * cadence): in its part of the paginated class it takes a token only while no other caller
   * of that part waits for one, so drift put back and new objects go first.
   */
  routine?: boolean;
  /** Called as the request leaves for the API, after any wait for the call budget (each attempt; each page of a list). */
  onSent?: () => void;
}

/** The most of the paginated class's window sweeps leave to the lists one object waits on. */
export const SWEEP_RESERVE = 0.2;
/**
 * The most one object's lists leave to sweeps: at the chart's shortest drift window (10 s) 1,020
 * databases (two engines of 510: two pages each) and 200 NodeBalancers (one page) sweep 30 pages
 * a minute, of the 100 the default share allows. At a quarter the sweeps fell behind to one every
 * 20 s while 200 NodeBalancers' configs lists took the rest, and drift waited for them.
 */
export const OBJECT_LIST_RESERVE = 0.4;

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

/**
 * The API limits routes by class (paginated GETs, single reads, writes, statistics: S176 §
 * rate limits), so each class has its own budget and the headers of one class never hold up
 * another (a drained list budget must not block a single GET or a PUT).
 */
export type RateClass = "list" | "read" | "mutation" | "stats";
const rateClasses: readonly RateClass[] = ["list", "read", "mutation", "stats"];

/** S176: `/stats` routes allow 50 requests a minute, apart from the token's general limit. */
const STATS_LIMIT_PER_MINUTE = 50;
// S176: paginated GETs allow 200 a minute (RateLimiter.listLimit). The API's answers to them
// report the general window (recorded: 1840), so this class's budget starts, and stays, at the
// documented figure unless a header reports a smaller limit. They count in the general window
// too (assumed).

export function rateClassOf(spec: { method: HttpMethod; route: string; rateClass?: RateClass }): RateClass {
  if (spec.rateClass !== undefined) return spec.rateClass;
  if (spec.route.endsWith("/stats")) return "stats";
  return spec.method === "GET" ? "read" : "mutation";
}

export interface RequestSpec<S extends z.ZodType> {
  method: HttpMethod;
  /** Route template with `{name}` placeholders: the metric label and error route. */
  route: string;
  /** Default: from the method and route (rateClassOf). */
  rateClass?: RateClass;
  params?: Record<string, string | number>;
  query?: Record<string, string | number | undefined>;
  /** camelCase body; converted to snake_case on the wire. */
  body?: unknown;
  filter?: FilterObject;
  schema: S;
  /** Default: every method but POST. */
  idempotent?: boolean;
  /** Sees the answer's headers of a successful attempt (e.g. the token's X-OAuth-Scopes). */
  onHeaders?: (headers: Readonly<Record<string, string | string[] | undefined>>) => void;
}

export interface Transport {
  request<S extends z.ZodType>(spec: RequestSpec<S>, opts?: CallOptions): Promise<Camelize<z.output<S>>>;
  close(): Promise<void>;
}

/** One request as its attempts share it: prepared once, the wire body and the log line included. */
interface Call<S extends z.ZodType> {
  spec: RequestSpec<S>;
  path: string;
  body: string | undefined;
  /** What the log says of it: the body redacted. */
  logged: object;
  /** The class's own bucket first, then the token's budget across classes. */
  buckets: TokenBucket[];
  rateClass: RateClass;
  maxWaitMs: number;
  sweep: boolean;
  routine: boolean;
  onSent?: () => void;
  signal?: AbortSignal;
}

export const defaultTimeouts: TimeoutOptions = { connectMs: 5_000, headersMs: 30_000, bodyMs: 30_000 };

/** The share of the call budget under which it counts as nearly spent. */
const NEARLY_SPENT_SHARE = 0.1;

/** Under a tenth of the bucket (or of the part's cap in it) left, or blocked until the API's window resets. */
const nearlySpent = (b: TokenBucket, part?: BucketPart): boolean => b.room(part) < Math.max(1, b.limit * NEARLY_SPENT_SHARE);

/** A paginated list's part of its class: sweeps, or one object's lists. */
const SWEEP_PART: BucketPart = { name: "sweep", other: "object", most: SWEEP_RESERVE };
const OBJECT_LIST_PART: BucketPart = { name: "object", other: "sweep", most: OBJECT_LIST_RESERVE };

export class HttpTransport implements Transport {
  readonly metrics: LinodeClientMetrics;
  private readonly token: string;
  /** The token's hash, for the metrics' account label. */
  private readonly account: string;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly userAgent: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly timeouts: TimeoutOptions;
  private readonly retry: RetryPolicy;
  private readonly aroundRetryWait: (wait: () => Promise<void>) => Promise<void>;
  private readonly limiter: RateLimiter | undefined;
  private readonly logger: ClientLogger;
  /** Requests begun and not settled (waiting for the budget, in flight or backing off). */
  private pending = 0;
  /** One per pool connection: a request waits for a connection before undici has it. */
  private readonly slots: ConnectionSlots;

  constructor(opts: LinodeClientOptions) {
    if (!opts.token) throw new TypeError("LinodeClient: token is required");
    const url = new URL(opts.baseUrl ?? DEFAULT_BASE_URL);
    this.token = opts.token;
    this.account = tokenId(opts.token);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, "");
    this.userAgent = opts.userAgent ?? "linode-operator/0.1";
    this.timeouts = { ...defaultTimeouts, ...opts.timeouts };
    this.retry = { ...defaultRetryPolicy, ...opts.retry };
    this.aroundRetryWait = opts.aroundRetryWait ?? ((wait) => wait());
    this.limiter = opts.rateLimit === false ? undefined
      : opts.rateLimit instanceof RateLimiter ? opts.rateLimit
        : new RateLimiter(opts.rateLimit);
    this.logger = opts.logger ?? silentLogger;
    this.metrics = opts.metrics ?? createLinodeClientMetrics(opts.registry);
    this.slots = new ConnectionSlots(opts.connections ?? DEFAULT_CONNECTIONS);
    if (opts.dispatcher) {
      this.dispatcher = opts.dispatcher;
      this.ownsDispatcher = false;
    } else {
      this.dispatcher = new Pool(this.origin, {
        connections: opts.connections ?? DEFAULT_CONNECTIONS,
        connect: { timeout: this.timeouts.connectMs },
        keepAliveTimeout: 30_000,
        headersTimeout: this.timeouts.headersMs,
        bodyTimeout: this.timeouts.bodyMs,
      });
      this.ownsDispatcher = true;
    }
  }

  /** Requests begun and not settled yet: a client with some is not idle, whoever holds it. */
  get inFlight(): number {
    return this.pending;
  }

  /**
   * Whether the token's call budget is (nearly) spent: under a tenth of it left, or blocked until
   * the API's window resets; the token-wide budget, or the part of its share of the paginated
   * lists (200 a minute) one object's lists may take, which a routine look of a NodeBalancer
   * spends from too.
   */
  budgetNearlySpent(): boolean {
    if (this.limiter === undefined) return false;
    const lists = this.listBucket(this.limiter);
    return nearlySpent(this.limiter.budget(this.token)) || nearlySpent(lists, OBJECT_LIST_PART);
  }

  /**
   * How long a sweep's page would be held for the paginated class now, while a single GET could
   * go at once (0 when nothing holds the sweep, or when the token's call budget is nearly spent
   * too, so a GET would not be any sooner).
   */
  sweepHeldMillis(): number {
    if (this.limiter === undefined) return 0;
    if (nearlySpent(this.limiter.budget(this.token))) return 0;
    const lists = this.listBucket(this.limiter);
    return lists.waitFor(SWEEP_PART);
  }

  /** This token's bucket of the paginated class. */
  private listBucket(limiter: RateLimiter): TokenBucket {
    return limiter.bucket(this.token, "list", { documentedLimit: limiter.listLimit });
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
    // Its account's series would otherwise stay on a shared registry for as long as the process
    // lives (a rotated-away token's last figure, frozen).
    for (const group of rateClasses) {
      this.metrics.rateLimitRemaining.remove({ account: this.account, group });
      this.metrics.rateLimitOwn.remove({ account: this.account, group });
    }
  }

  async request<S extends z.ZodType>(spec: RequestSpec<S>, opts: CallOptions = {}): Promise<Camelize<z.output<S>>> {
    this.pending++;
    try {
      return await this.send(spec, opts);
    } finally {
      this.pending--;
    }
  }

  private async send<S extends z.ZodType>(spec: RequestSpec<S>, opts: CallOptions): Promise<Camelize<z.output<S>>> {
    const policy = opts.retry ? { ...this.retry, ...opts.retry } : this.retry;
    const idempotent = spec.idempotent ?? spec.method !== "POST";
    const path = this.buildPath(spec);
    const wireBody = spec.body === undefined ? undefined : snakify(spec.body);
    const body = wireBody === undefined ? undefined : JSON.stringify(wireBody);
    const logged = { method: spec.method, route: spec.route, path, ...(wireBody === undefined ? {} : { body: redact(wireBody) }), ...(spec.filter ? { filter: spec.filter } : {}) };
    const rateClass = rateClassOf(spec);
    // The class's own bucket, and the token's budget across classes (statistics have a limit of their own).
    const limiter = this.limiter;
    const buckets = limiter === undefined ? []
      : rateClass === "stats" ? [limiter.bucket(this.token, rateClass, { documentedLimit: STATS_LIMIT_PER_MINUTE })]
        : rateClass === "list" ? [this.listBucket(limiter), limiter.budget(this.token)]
          : [limiter.bucket(this.token, rateClass), limiter.budget(this.token)];
    const call: Call<S> = { spec, path, body, logged, buckets, rateClass, maxWaitMs: policy.maxRateLimitWaitMs, sweep: opts.sweep === true, routine: opts.routine === true, ...(opts.onSent ? { onSent: opts.onSent } : {}), ...(opts.signal ? { signal: opts.signal } : {}) };
    let ambiguousFailure = false;
    // Whether some attempt may have reached the API: from then on no failure of this request is never-sent.
    let sent = false;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(call, attempt, sent);
      } catch (caught) {
        const err = transportError(caught, spec.method, spec.route, opts.signal);
        sent = !err.neverSent;
        // A DELETE whose earlier attempt may have landed: the 404 means it did.
        if (spec.method === "DELETE" && ambiguousFailure && err.kind === "notFound") {
          return camelize(spec.schema.parse({}));
        }
        if (!(attempt < policy.maxAttempts && isRetryable(err, idempotent))) throw err;
        const wait = err.kind === "rateLimited" ? (err.retryAfterMs ?? backoffDelay(attempt, policy)) : backoffDelay(attempt, policy);
        if (err.kind === "rateLimited" && wait > policy.maxRateLimitWaitMs) throw err;
        if (err.kind === "transient") ambiguousFailure = true;
        this.metrics.retries.inc({ route: spec.route, method: spec.method, reason: err.kind });
        this.logger.debug({ method: spec.method, route: spec.route, attempt, kind: err.kind, waitMs: wait }, "linode api retry");
        try {
          await this.aroundRetryWait(() => sleep(wait, opts.signal));
        } catch (abort) {
          throw transportError(abort, spec.method, spec.route, opts.signal, { sentBefore: sent, dispatched: false });
        }
      }
    }
  }

  private async attempt<S extends z.ZodType>(call: Call<S>, attempt: number, sentBefore: boolean): Promise<Camelize<z.output<S>>> {
    const { spec, buckets, rateClass, maxWaitMs, sweep, routine, signal } = call;
    let throttledMs = 0;
    const bucket = buckets[0];
    try {
      for (const [i, b] of buckets.entries()) {
        const got = await b.acquireWithin(maxWaitMs - throttledMs, signal, i === 0 && rateClass === "list" ? (sweep ? SWEEP_PART : OBJECT_LIST_PART) : undefined, i === 0 && routine);
        // A budget that will not be back soon is the caller's to schedule (a RateLimited condition), not a silent stall.
        if (typeof got !== "number") {
          const which = i === 0 ? `${rateClass} rate-limit budget` : "call budget (the share of the API's limit this client may use)";
          throw new LinodeError(`${spec.method} ${spec.route}: the ${which} is spent for ${String(Math.ceil(got.wait / 1000))} s`, { kind: "rateLimited", method: spec.method, route: spec.route, retryAfterMs: got.wait, neverSent: !sentBefore });
        }
        throttledMs += got;
      }
      if (bucket !== undefined) this.metrics.rateLimitWait.observe({ group: rateClass }, throttledMs / 1000);
      // What binds this class here: its own bucket or the token's budget, whichever is smaller.
      if (bucket !== undefined) this.metrics.rateLimitOwn.set({ account: this.account, group: rateClass }, Math.min(...buckets.map((b) => b.limit)));
      // Checked here so that a cancellation before dispatch is known to be one (undici's own abort is not).
      signal?.throwIfAborted();
      await this.slots.acquire(signal);
    } catch (err) {
      throw transportError(err, spec.method, spec.route, signal, { sentBefore, dispatched: false });
    }
    // Released once the body is read (its connection is free then), or however the request ends.
    let held = true;
    const release = (): void => {
      if (held) this.slots.release();
      held = false;
    };
    try {
      return await this.dispatch(call, { attempt, sentBefore, throttledMs }, release);
    } finally {
      release();
    }
  }

  /** One request on a connection of its own (its slot held by the caller until `release`), answered and read. */
  private async dispatch<S extends z.ZodType>(
    call: Call<S>, { attempt, sentBefore, throttledMs }: { attempt: number; sentBefore: boolean; throttledMs: number }, release: () => void,
  ): Promise<Camelize<z.output<S>>> {
    const { spec, path, body, logged, buckets, rateClass, signal } = call;
    const bucket = buckets[0];
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.token}`,
      accept: "application/json",
      "user-agent": this.userAgent,
    };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (spec.filter) headers["x-filter"] = serializeFilter(spec.filter);
    call.onSent?.();
    const started = performance.now();
    const labels = { route: spec.route, method: spec.method };
    // undici checks its own headers timeout on a coarse (~1 s) timer; a native timer makes
    // short timeouts fire on time. undici's remains as the backstop, with the body timeout.
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.timeouts.headersMs);
    // Forwarded by hand rather than AbortSignal.any, which keeps every combined signal alive.
    const forwardAbort = (): void => deadline.abort(signal?.reason);
    if (signal?.aborted === true) forwardAbort();
    else signal?.addEventListener("abort", forwardAbort, { once: true });
    let status = 0;
    try {
      const res = await this.dispatcher.request({
        origin: this.origin,
        path,
        method: spec.method,
        headers,
        body: body ?? null,
        signal: deadline.signal,
        headersTimeout: this.timeouts.headersMs,
        bodyTimeout: this.timeouts.bodyMs,
      });
      clearTimeout(timer);
      status = res.statusCode;
      const text = await res.body.text();
      release();
      const obs = parseRateLimitHeaders(res.headers);
      if (bucket) {
        for (const b of buckets) b.observe(obs);
        this.metrics.rateLimitRemaining.set({ account: this.account, group: rateClass }, obs.remaining ?? Math.floor(bucket.available));
      } else if (obs.remaining !== undefined) {
        this.metrics.rateLimitRemaining.set({ account: this.account, group: rateClass }, obs.remaining);
      }
      this.metrics.requests.inc({ ...labels, status: String(status) });
      this.metrics.duration.observe(labels, (performance.now() - started) / 1000);
      this.logger.debug({ ...logged, status, attempt, durationMs: Math.round(performance.now() - started), throttledMs }, "linode api request");
      if (status >= 200 && status < 300) {
        const parsed = await readAnswer(spec.schema, text, { status, method: spec.method, route: spec.route });
        spec.onHeaders?.(res.headers);
        return parsed;
      }
      throw new LinodeApiError(status, errorItems(status, text), {
        method: spec.method,
        route: spec.route,
        ...(status === 429 ? { retryAfterMs: obs.retryAfterMs ?? (obs.resetAtMs ? Math.max(0, obs.resetAtMs - Date.now()) : 1000) } : {}),
      });
    } catch (err) {
      if (err instanceof LinodeError) throw err;
      const wrapped = deadline.signal.aborted && signal?.aborted !== true
        ? new LinodeTransportError("UND_ERR_HEADERS_TIMEOUT", false, { kind: "transient", method: spec.method, route: spec.route, cause: err })
        : transportError(err, spec.method, spec.route, signal, { sentBefore, dispatched: true });
      this.metrics.requests.inc({ ...labels, status: wrapped instanceof LinodeTransportError ? wrapped.code : "error" });
      this.metrics.duration.observe(labels, (performance.now() - started) / 1000);
      this.logger.debug({ ...logged, status, attempt, kind: wrapped.kind, error: wrapped.message }, "linode api request failed");
      throw wrapped;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", forwardAbort);
    }
  }

  private buildPath(spec: RequestSpec<z.ZodType>): string {
    const filled = spec.route.replace(/\{(\w+)\}/g, (_m, name: string) => {
      const v = spec.params?.[name];
      if (v === undefined) throw new TypeError(`missing path parameter ${name} for ${spec.route}`);
      // Engine ids contain a slash ("mysql/8"); the API takes it encoded, as linodego sends it.
      return encodeURIComponent(String(v));
    });
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(spec.query ?? {})) if (v !== undefined) qs.set(k, String(v));
    const q = qs.toString();
    return `${this.basePath}${filled}${q ? `?${q}` : ""}`;
  }
}

function errorItems(status: number, text: string): ApiErrorItem[] {
  try {
    const parsed = apiErrorBodySchema.safeParse(JSON.parse(text));
    if (parsed.success && parsed.data.errors.length > 0) {
      return parsed.data.errors.map((e) => (e.field === undefined ? { reason: e.reason } : { reason: e.reason, field: e.field }));
    }
  } catch {
    // Not JSON (a proxy's HTML error page): fall through to a generic reason.
  }
  return [{ reason: `HTTP ${status}` }];
}
