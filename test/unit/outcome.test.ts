// Ready and Synced as outcome.ts derives them from what a pass observed: every problem the
// kind found is named, the first one's reason is Synced's (issue 43: the last one used to hide
// the others).
import { describe, expect, it } from "vitest";
import type { Observed } from "../../src/runtime/managed.ts";
import { conditionsOf, settled, type Findings } from "../../src/runtime/outcome.ts";
import { problems } from "../../src/runtime/problems.ts";

const region = { reason: "ImmutableFieldMismatch", message: "the NodeBalancer differs from the spec in what cannot change, so nothing is sent: region (spec us-west, NodeBalancer us-east)" };
const udp = { reason: "PremiumOnly", message: "the spec asks the common NodeBalancer for what only premium types take, so nothing is sent: add config 5353/udp (a new udp config)" };

const observed = (more: Partial<Observed<unknown, unknown>> = {}): Observed<unknown, unknown> =>
  ({ exists: true, external: {}, externalId: "7", status: {}, ready: true, upToDate: true, ...more });
const syncedOf = (found: Findings): { status: string; reason: string; message?: string | undefined } | undefined =>
  conditionsOf({ type: "observed" }, found).find((c) => c.type === "Synced");

describe("Synced from what observe found", () => {
  it("two problems: False with the first one's reason, the message naming both reasons up front and each detail", () => {
    const s = syncedOf({ observeOnly: false, observed: observed({ upToDate: false, diff: "add config 5353/udp", unfixable: problems(region, false, udp, undefined) }) });
    expect(s).toMatchObject({ status: "False", reason: "ImmutableFieldMismatch" });
    expect(s?.message).toMatch(/^2 problems \(ImmutableFieldMismatch, PremiumOnly\)\. /);
    expect(s?.message).toContain(`ImmutableFieldMismatch: ${region.message}`);
    expect(s?.message).toContain(`PremiumOnly: ${udp.message}`);
  });

  it("one problem: its own reason and message, as it was", () => {
    expect(syncedOf({ observeOnly: false, observed: observed({ unfixable: problems(false, udp) }) })).toEqual({ type: "Synced", status: "False", reason: "PremiumOnly", message: udp.message });
  });

  it("none (an empty list): in step", () => {
    const found = { observeOnly: false, observed: observed({ unfixable: problems(false, undefined) }) };
    expect(syncedOf(found)).toMatchObject({ status: "True", reason: "ReconcileSuccess" });
    expect(settled({ type: "observed" }, found)).toBe(true);
  });

  it("observed only: both problems are among the differences it reports, Synced stays True", () => {
    const s = syncedOf({ observeOnly: true, observed: observed({ upToDate: false, diff: "size 2 → 5", unfixable: [region, udp] }) });
    expect(s).toMatchObject({ status: "True", reason: "Observing" });
    expect(s?.message).toContain("size 2 → 5");
    expect(s?.message).toContain(region.message);
    expect(s?.message).toContain(udp.message);
  });

  it("settled while problems wait for the spec (nothing more this operator can do)", () => {
    expect(settled({ type: "observed" }, { observeOnly: false, observed: observed({ unfixable: [region, udp] }) })).toBe(true);
  });
});
