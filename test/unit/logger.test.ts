// The log line format users' pipelines match on: string levels, the program under "logger", the
// object under namespace/name, and secrets redacted by field name.
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/runtime/logger.ts";

describe("log lines", () => {
  it("carry string levels, logger, namespace and name, and never a password or token", () => {
    const lines: string[] = [];
    const sink = new Writable({ write(chunk: Buffer, _enc, done) { lines.push(chunk.toString()); done(); } });
    const log = createLogger({ level: "info" }, sink);
    log.child({ kind: "ManagedDatabase", namespace: "team-a", name: "orders" }).warn({ password: "hunter2", token: "secret-token", headers: { authorization: "Bearer x" } }, "reconcile failed");
    log.debug({}, "not at info");
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0] ?? "{}") as Record<string, unknown>;
    expect(line).toMatchObject({ level: "warn", logger: "linode-operator", kind: "ManagedDatabase", namespace: "team-a", name: "orders", msg: "reconcile failed" });
    expect(lines[0]).not.toMatch(/hunter2|secret-token|Bearer x/);
  });
});
