// What `linode-operator doctor` prints: one line per check, OK / WARN / FAIL, the fix under any
// that is not OK; or the same as JSON for machines. Any FAIL makes the exit code 1.
export type CheckStatus = "OK" | "WARN" | "FAIL";

export interface CheckResult {
  /** What was checked, e.g. "Linode API", "CRD nodebalancers.linode.operator.dev". */
  check: string;
  status: CheckStatus;
  /** What was found. */
  message: string;
  /** What to do about it (only when not OK). */
  fix?: string;
}

export const ok = (check: string, message: string): CheckResult => ({ check, status: "OK", message });
export const warn = (check: string, message: string, fix: string): CheckResult => ({ check, status: "WARN", message, fix });
export const fail = (check: string, message: string, fix: string): CheckResult => ({ check, status: "FAIL", message, fix });

export function renderText(results: readonly CheckResult[]): string {
  const width = Math.max(0, ...results.map((r) => r.check.length));
  const lines = results.flatMap((r) => [
    `${r.status.padEnd(4)}  ${r.check.padEnd(width)}  ${r.message}`,
    ...(r.fix !== undefined && r.status !== "OK" ? [`      ${" ".repeat(width)}  fix: ${r.fix}`] : []),
  ]);
  const count = (s: CheckStatus): number => results.filter((r) => r.status === s).length;
  lines.push("", `${String(count("OK"))} OK, ${String(count("WARN"))} WARN, ${String(count("FAIL"))} FAIL`);
  return lines.join("\n");
}

export function renderJson(results: readonly CheckResult[]): string {
  return JSON.stringify({ ok: exitCode(results) === 0, checks: results }, null, 2);
}

export const exitCode = (results: readonly CheckResult[]): number => (results.some((r) => r.status === "FAIL") ? 1 : 0);
