// Whether the operator's Linode token can work: the API answers (a network failure is not a bad
// token), the token is valid, and its scopes cover what the kinds need. The start-up gate
// (doctor/token-gate.ts) and `doctor` both judge by this.
import { LinodeApiError, LinodeError, grants, scopeText, type LinodeClient, type TokenProfile } from "../linode/index.ts";
import { neededScopes } from "../resources/token-scopes.ts";
import { fail, ok, warn, type CheckResult } from "./report.ts";

type Needed = ReturnType<typeof neededScopes>[number];

export type TokenVerdict =
  | { kind: "usable"; profile: TokenProfile; missingFeatures: Needed[] }
  /** The API answered 401 Invalid Token: unknown, expired or revoked. */
  | { kind: "invalid"; detail: string }
  /** Valid, but without a scope a kind needs for every object. */
  | { kind: "underScoped"; profile: TokenProfile; missing: Needed[]; missingFeatures: Needed[] }
  /** No answer, or one that says nothing about the token (5xx, 429, a proxy's page): not the token's fault. */
  | { kind: "unreachable"; detail: string };

export const TOKEN_SCOPES_DOC = "docs/token-scopes.md";

export async function assessToken(client: LinodeClient, kinds: readonly string[], signal?: AbortSignal): Promise<TokenVerdict> {
  let profile: TokenProfile;
  try {
    profile = await client.profile.get({ retry: { maxAttempts: 2 }, ...(signal !== undefined ? { signal } : {}) });
  } catch (err) {
    if (err instanceof LinodeApiError && err.status === 401) return { kind: "invalid", detail: err.reasons.join("; ") || "401" };
    if (err instanceof LinodeApiError && err.kind === "terminal") return { kind: "invalid", detail: err.message };
    return { kind: "unreachable", detail: err instanceof LinodeError ? err.message : String(err) };
  }
  const needed = neededScopes(kinds);
  // An answer without the header (a proxy that strips it) cannot be judged: taken as all scopes.
  const held = profile.scopes ?? "*";
  const missing = needed.filter((n) => !grants(held, n.scope));
  const missingFeatures = missing.filter((n) => n.feature !== undefined);
  const missingAlways = missing.filter((n) => n.feature === undefined);
  return missingAlways.length > 0 ? { kind: "underScoped", profile, missing: missingAlways, missingFeatures } : { kind: "usable", profile, missingFeatures };
}

const list = (needs: readonly Needed[]): string => needs.map((n) => scopeText(n.scope)).join(", ");

/** One sentence saying why a token cannot work, with the fix (never the token): the log line, the Event, /readyz. */
export function verdictProblem(v: TokenVerdict, apiUrl: string): string | undefined {
  switch (v.kind) {
    case "usable": return undefined;
    case "invalid": return `the Linode API refused the operator's token (${v.detail}): it is unknown, expired or revoked; put a valid personal access token in the token Secret (${TOKEN_SCOPES_DOC} lists the scopes it needs)`;
    case "underScoped": return `the operator's Linode token lacks the scope${v.missing.length > 1 ? "s" : ""} ${list(v.missing)} (needed by ${[...new Set(v.missing.flatMap((n) => n.kinds))].join(", ")}); create a token with ${list(v.missing)} (${TOKEN_SCOPES_DOC}) and put it in the token Secret`;
    case "unreachable": return `the Linode API at ${apiUrl} could not be reached (${v.detail}): a network problem, not the token; check the pod's egress to it (NetworkPolicy, proxy, DNS)`;
  }
}

/** Doctor's lines: the API, the token, its scopes, its user. */
export function tokenChecks(v: TokenVerdict, apiUrl: string): CheckResult[] {
  if (v.kind === "unreachable") {
    return [fail("Linode API", `not reachable at ${apiUrl}: ${v.detail}`, "check the network path to the API (egress NetworkPolicy, proxy, DNS) and LINODE_API_URL; this says nothing about the token")];
  }
  const api = ok("Linode API", `reachable at ${apiUrl}`);
  if (v.kind === "invalid") {
    return [api, fail("Linode token", `refused: ${v.detail}`, `create a personal access token (Cloud Manager > Profile > API Tokens) with the scopes in ${TOKEN_SCOPES_DOC} and put it in the operator's token Secret`)];
  }
  const { profile } = v;
  const lines: CheckResult[] = [api, ok("Linode token", `valid (user ${profile.username})`)];
  const scopesHeader = profile.scopesHeader ?? "(no X-OAuth-Scopes header)";
  if (v.kind === "underScoped") {
    const why = v.missing.map((n) => `${scopeText(n.scope)} (${n.why.join("; ")})`).join("; ");
    // The fix names what every object needs; a feature's scope only with the feature, so nobody is
    // told to grant a broad one (account:read_write, for deletionProtection) they do not use.
    const optional = v.missingFeatures.map((n) => `${scopeText(n.scope)} for ${n.feature ?? ""}`);
    lines.push(fail("Linode token scopes", `has "${scopesHeader}", missing ${why}`, `create a token with ${list(v.missing)}${optional.length > 0 ? ` (and ${optional.join(", ")}, if any resource uses it)` : ""} (${TOKEN_SCOPES_DOC}) and put it in the token Secret`));
  } else {
    lines.push(ok("Linode token scopes", `"${scopesHeader}" covers what the kinds need`));
  }
  for (const n of v.missingFeatures) {
    lines.push(warn(`Linode token scopes (${n.feature ?? ""})`, `no ${scopeText(n.scope)}: ${n.feature ?? ""} will be refused (${n.why.join("; ")})`, `add ${scopeText(n.scope)} to the token if any resource sets ${n.feature ?? ""}`));
  }
  if (profile.restricted) {
    lines.push(warn("Linode user", `${profile.username} is a restricted user: it needs grants (add_databases, add_nodebalancers, read_write on each object) and cannot delete databases or reset their credentials`, "use a token of an unrestricted user, or grant what the kinds need (docs/token-scopes.md)"));
  }
  return lines;
}
