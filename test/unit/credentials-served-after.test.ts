// When a credentials read needs no confirming read: the API served it (its Date header) at
// least two whole seconds after `updated`'s second. Both are the API's clock, to the second.
import { describe, expect, it } from "vitest";
import { servedSecondsAfter } from "../../src/resources/shared/api-time.ts";

const at = (s: string): number => Date.parse(s);

describe("servedSecondsAfter", () => {
  it("two whole seconds after `updated`'s second: served after; one, or the same second: not", () => {
    expect(servedSecondsAfter(at("2026-11-29T10:00:02Z"), "2026-11-29T10:00:00")).toBe(true);
    expect(servedSecondsAfter(at("2026-11-29T10:00:01.999Z"), "2026-11-29T10:00:00")).toBe(false);
    expect(servedSecondsAfter(at("2026-11-29T10:00:00.900Z"), "2026-11-29T10:00:00")).toBe(false);
  });

  it("an answer with no Date header, or a Date before `updated`, or an `updated` that is no time: never served after", () => {
    expect(servedSecondsAfter(undefined, "2026-11-29T10:00:00")).toBe(false);
    expect(servedSecondsAfter(at("2026-11-29T09:00:00Z"), "2026-11-29T10:00:00")).toBe(false);
    expect(servedSecondsAfter(at("2026-11-29T10:00:05Z"), "not a time")).toBe(false);
  });

  it("reads `updated` as UTC whether or not it says so", () => {
    expect(servedSecondsAfter(at("2026-11-29T10:00:03Z"), "2026-11-29T10:00:00Z")).toBe(true);
    expect(servedSecondsAfter(at("2026-11-29T10:00:03Z"), "2026-11-29T12:00:00+02:00")).toBe(true);
  });
});
