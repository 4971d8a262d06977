// What `status` says the operator does next, derived from the conditions, the annotation and
// the deletion timestamp against the runtime's cadences and backoff.
import { describe, expect, it } from "vitest";
import type { Condition } from "../../src/runtime/condition-schema.ts";
import { conditionReasonMeanings } from "../../src/runtime/reasons.ts";
import { nextBackoffRetry, nextStep, type NextInput } from "../../src/status/next-pass.ts";

const NOW = Date.parse("2026-11-27T08:00:00Z");
const ago = (s: number): string => new Date(NOW - s * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
const cond = (type: string, status: Condition["status"], reason: string, message?: string, since = 60): Condition =>
  ({ type, status, reason, lastTransitionTime: ago(since), observedGeneration: 1, ...(message !== undefined ? { message } : {}) });
const input = (conditions: Condition[], extra: Partial<NextInput> = {}): NextInput =>
  ({ kind: "ManagedDatabase", metadata: { generation: 1, creationTimestamp: ago(600) }, conditions, meanings: conditionReasonMeanings, now: NOW, ...extra });
const settled = [cond("Ready", "True", "Available"), cond("Synced", "True", "ReconcileSuccess")];

describe("the next step", () => {
  it("a settled object: a drift check within the ready cadence and its jitter, said to be a bound; a snapshot's several ready polls apart", () => {
    const step = nextStep(input(settled));
    expect(step.what).toMatch(/^a drift check/);
    expect(step.when).toMatch(/^within 5m30s \(every 5m ±10 %/);
    expect(step.basis).toMatch(/not recorded .* bound/);
    expect(step.by).toBeUndefined();
    expect(nextStep(input(settled, { kind: "DatabaseSnapshot" })).when).toMatch(/^within 33m \(every 30m/);
  });

  it("not Ready while in sync: the pending cadence", () => {
    const step = nextStep(input([cond("Ready", "False", "Creating", "the cloud object is being created"), cond("Synced", "True", "ReconcileSuccess")]));
    expect(step.what).toContain("Creating: the cloud object is being created");
    expect(step.when).toMatch(/^within 5s \(the pending cadence, every 5s\)/);
  });

  it("a passing error: the latest time the backoff retries, counted from when Synced turned False", () => {
    expect(nextBackoffRetry(0, 500)).toBe(1_000);
    expect(nextBackoffRetry(0, 1_500)).toBe(3_000);
    expect(nextBackoffRetry(0, 10_000)).toBe(15_000);
    // Capped at 5 min a step: 1+2+...+256 s = 511 s, then 300 s steps.
    expect(nextBackoffRetry(0, 600_000)).toBe(811_000);
    const step = nextStep(input([cond("Ready", "True", "Available"), cond("Synced", "False", "ReconcileError", "GET /databases -> 503", 10)]));
    expect(step.by).toBe(ago(10 - 15));
    expect(step.when).toMatch(/^by \S+ \(in 5s\) at the latest$/);
    expect(step.basis).toContain(`ReconcileError since ${ago(10)}`);
  });

  it("the call budget: waits for it, naming whose budget it is", () => {
    const own = nextStep(input([cond("Ready", "True", "Available"), cond("Synced", "False", "RateLimited", "reading the database: waiting for the operator's share of the Linode API rate limit")]));
    expect(own.what).toMatch(/call budget/);
    const api = nextStep(input([cond("Ready", "True", "Available"), cond("Synced", "False", "RateLimited", "reading the database: rate limited by the Linode API")]));
    expect(api.what).toMatch(/Retry-After/);
  });

  it("held (Ready and Synced alike): looked at again on the drift cadence; a reference waits for what it names", () => {
    const held = nextStep(input([cond("Ready", "False", "ExternalResourceGone", "gone"), cond("Synced", "False", "ExternalResourceGone", "gone")]));
    expect(held.when).toMatch(/^within 5m30s \(the drift cadence\)/);
    expect(held.basis).toContain(conditionReasonMeanings.ExternalResourceGone);
    const ref = nextStep(input([cond("Ready", "False", "ReferenceNotFound", "x"), cond("Synced", "False", "ReferenceNotFound", "x")]));
    expect(ref.when).toMatch(/as soon as that object changes/);
  });

  it("a refusal that waits for a change: the reason's documented meaning, and no time", () => {
    const step = nextStep(input([cond("Synced", "False", "InvalidSpec", "invalid spec: version")]));
    expect(step.what).toContain(conditionReasonMeanings.InvalidSpec);
    expect(step.when).toMatch(/^when the spec/);
    expect(step.by).toBeUndefined();
  });

  it("paused, deleting, or a spec not reported on yet come first", () => {
    expect(nextStep(input(settled, { metadata: { generation: 1, annotations: { "linode.operator.dev/paused": "true" } } })).what).toMatch(/^nothing: it is paused/);
    expect(nextStep(input([cond("Ready", "False", "Deleting")], { metadata: { generation: 1, deletionTimestamp: ago(5) } })).when).toBe("every 3s until the cloud object is gone");
    expect(nextStep(input(settled, { metadata: { generation: 2 } })).what).toBe("a pass for the spec's generation 2: the conditions describe generation 1");
    expect(nextStep(input([], { metadata: { generation: 1, creationTimestamp: ago(120) } })).what).toMatch(/is the operator running/);
    expect(nextStep(input([], { metadata: { generation: 1, creationTimestamp: ago(5) } })).what).not.toMatch(/is the operator running/);
  });
});
