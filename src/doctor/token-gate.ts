// At start, before the operator leads or reconciles anything: can its own Linode token work?
// A token the API refuses, or one without a scope a kind needs, keeps the pod not Ready (the
// readiness probe says why), with one log line and one Warning Event on the operator's Deployment
// per distinct problem (never the token), and is looked at again periodically, the token read
// afresh each time (a token Secret or file), so fixing it makes the operator Ready without a
// restart. A Linode API that cannot be reached says nothing of the token: that is logged as what
// it is (a network problem), and the operator starts.
import { assessToken, verdictProblem, type TokenVerdict } from "./token.ts";
import { errorChain, isNotFound } from "../kube/errors.ts";
import type { ClusterInspection, KubeApi, KubeObject } from "../kube/types.ts";
import type { LinodeClient } from "../linode/index.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { Logger } from "../runtime/logger.ts";
import { readToken, tokenCanChange, tokenWhere, type TokenSourceSettings } from "../runtime/token-source.ts";

export const TOKEN_UNUSABLE_REASON = "LinodeTokenUnusable";
export const DEFAULT_TOKEN_RECHECK_MILLIS = 10_000;

export interface TokenGateOptions {
  settings: TokenSourceSettings & { linodeApiUrl: string; deploymentName?: string | undefined };
  kube: Pick<KubeApi, "getSecret"> & Pick<ClusterInspection, "getDeployment">;
  log: Pick<Logger, "info" | "warn" | "error">;
  events: EventRecorder;
  /** The kinds whose needs the token must meet. */
  kinds: readonly string[];
  /** A client for a token (closed after each look). */
  clientFor: (token: string) => LinodeClient;
  /** Why the pod is not Ready (undefined: nothing here holds it back). */
  setNotReady: (why: string | undefined) => void;
  recheckMillis?: number;
  signal?: AbortSignal;
}

const sleep = (ms: number, signal?: AbortSignal): Promise<void> => new Promise((resolve) => {
  const t = setTimeout(resolve, ms);
  signal?.addEventListener("abort", () => { clearTimeout(t); resolve(); }, { once: true });
});

/** Resolves with a token that works, once there is one (undefined: aborted). */
export async function waitForUsableToken(o: TokenGateOptions): Promise<string | undefined> {
  const s = o.settings;
  const aborted = (): boolean => o.signal?.aborted === true;
  let shown: string | undefined;
  for (;;) {
    const read = await readToken(s, o.kube);
    let problem: string | undefined;
    let verdict: TokenVerdict["kind"] | "unreadable" = "unreadable";
    if (read.token === undefined) {
      problem = read.problem;
    } else {
      const client = o.clientFor(read.token);
      try {
        const v = await assessToken(client, o.kinds, o.signal);
        verdict = v.kind;
        problem = verdictProblem(v, s.linodeApiUrl);
      } finally {
        await client.close();
      }
      // Stopped while the API was asked: the abort itself fails the call, which must not read as
      // an unreachable API (and so as leave to start).
      if (aborted()) return undefined;
      if (problem === undefined) {
        if (shown !== undefined) o.log.info({ check: "linode-token" }, "the operator's Linode token works now");
        o.setNotReady(undefined);
        return read.token;
      }
      if (verdict === "unreachable") {
        // Says nothing of the token, and the operator has Kubernetes-side work (leases, finalizers,
        // status) that needs no Linode API: it goes on, and each resource says when calls fail.
        o.log.warn({ check: "linode-token", verdict }, `${problem}; starting without having checked the token`);
        o.setNotReady(undefined);
        return read.token;
      }
    }
    if (aborted()) return undefined;
    const message = `${problem}; fix ${tokenWhere(s)}`;
    o.setNotReady(message);
    if (message !== shown) {
      shown = message;
      o.log.error({ check: "linode-token", verdict, recheckSeconds: (o.recheckMillis ?? DEFAULT_TOKEN_RECHECK_MILLIS) / 1000, tokenCanChange: tokenCanChange(s) }, `not Ready: ${message}`);
      await warnOnDeployment(o, message);
    }
    await sleep(o.recheckMillis ?? DEFAULT_TOKEN_RECHECK_MILLIS, o.signal);
    if (aborted()) return undefined;
  }
}

async function warnOnDeployment(o: TokenGateOptions, message: string): Promise<void> {
  const name = o.settings.deploymentName;
  if (name === undefined) return;
  let deployment: KubeObject;
  try {
    deployment = await o.kube.getDeployment({ namespace: o.settings.leaderElectionNamespace, name });
  } catch (err) {
    o.log.warn({ err: errorChain(err), deployment: name, notFound: isNotFound(err) }, "cannot read the operator's Deployment to record why it is not Ready");
    return;
  }
  o.events.warning({ ...deployment, apiVersion: "apps/v1", kind: "Deployment" }, TOKEN_UNUSABLE_REASON, "CheckLinodeToken", message);
}
