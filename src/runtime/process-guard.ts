// The last boundary: a throw or a rejected promise nothing handled (a kind's bug in a timer or
// a callback, a handler outside any pass). Node's default ends the process, which takes every
// namespace's reconciles down with it, again after each restart when the cause is an object
// that is still there: a tenant's input must fail that tenant's object, never the process.
// Logged and counted (linode_operator_unexpected_errors_total{where="process"}) instead: a
// rising count is a bug to report, the log line has its stack.
import { errorChain } from "../kube/errors.ts";
import type { Logger } from "./logger.ts";

export interface ProcessGuardDeps {
  log: Pick<Logger, "error">;
  count(): void;
}

/** Installs the handlers once per process; returns what removes them (for tests). */
export function guardProcess(deps: ProcessGuardDeps): () => void {
  const report = (kind: string) => (err: unknown): void => {
    try {
      deps.count();
    } catch { /* counting must not throw from here */ }
    try {
      deps.log.error({ err: errorChain(err), stack: err instanceof Error ? err.stack : undefined }, `${kind}: logged and counted, the operator goes on`);
    } catch { /* nor logging */ }
  };
  const rejection = report("unhandled promise rejection");
  const exception = report("uncaught exception");
  process.on("unhandledRejection", rejection);
  process.on("uncaughtException", exception);
  return () => {
    process.off("unhandledRejection", rejection);
    process.off("uncaughtException", exception);
  };
}
