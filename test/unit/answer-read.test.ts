// Reading an answer: a list page is validated and converted a slice of items at a time, with
// the event loop free between slices, and reads exactly as it did in one go: the same value,
// the same issues (paths and messages, never a value) for an item that does not validate.
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ITEMS_PER_SLICE, readAnswer, SLICE_MILLIS } from "../../src/linode/answer.ts";
import { camelize } from "../../src/linode/case.ts";
import { LinodeResponseError } from "../../src/linode/errors.ts";
import { databaseListSchema, databaseSchema } from "../../src/linode/schemas/databases.ts";

const recorded = JSON.parse(await readFile(new URL("../fixtures/recorded/TestDatabase_List.json", import.meta.url), "utf8")) as { method: string; responseBody: { data?: Record<string, unknown>[] } }[];
const one = recorded.find((r) => r.method === "GET")?.responseBody.data?.[0] ?? {};
const pageOf = (n: number): { data: Record<string, unknown>[]; page: number; pages: number; results: number } =>
  ({ data: Array.from({ length: n }, (_, i) => ({ ...one, id: 1_000 + i, label: `db-${String(i)}` })), page: 2, pages: 3, results: 3 * n });
const from = { status: 200, method: "GET", route: "/databases/instances" };

describe("readAnswer", () => {
  it("reads a page of many items as one validation of the whole page would, the items in their order", async () => {
    const page = pageOf(ITEMS_PER_SLICE * 4 + 7);
    const read = await readAnswer(databaseListSchema, JSON.stringify(page), from);
    expect(read).toEqual(camelize(databaseListSchema.parse(page)));
    expect(read.data.map((d) => d.id)).toEqual(page.data.map((d) => d.id));
  });

  it("gives the event loop a turn between slices of a long page, and none within a short one", async () => {
    const turnsDuring = async (n: number): Promise<number> => {
      let turns = 0;
      let reading = true;
      const tick = (): void => { if (reading) { turns++; setImmediate(tick); } };
      setImmediate(tick);
      await readAnswer(databaseListSchema, JSON.stringify(pageOf(n)), from);
      reading = false;
      return turns;
    };
    expect(await turnsDuring(ITEMS_PER_SLICE * 10)).toBeGreaterThanOrEqual(9);
    expect(await turnsDuring(ITEMS_PER_SLICE)).toBe(0);
  });

  it("ends a slice early once it has held the loop SLICE_MILLIS (a slow CPU, a CPU limit): items slow to read yield more often", async () => {
    // Each item takes a millisecond to read: a slice of ITEMS_PER_SLICE would hold the loop 100 ms.
    const slow = z.number().transform((n) => { const end = performance.now() + 1; while (performance.now() < end) { /* busy */ } return n; });
    const schema = z.object({ data: z.array(slow), page: z.number() });
    const n = ITEMS_PER_SLICE + 50;
    let turns = 0;
    let reading = true;
    const tick = (): void => { if (reading) { turns++; setImmediate(tick); } };
    setImmediate(tick);
    const read = await readAnswer(schema, JSON.stringify({ data: Array.from({ length: n }, (_, i) => i), page: 1 }), from);
    reading = false;
    expect(read.data).toHaveLength(n);
    // A look at the clock every 10 items: a turn at least every max(SLICE_MILLIS, 10) items.
    expect(SLICE_MILLIS).toBeLessThanOrEqual(10);
    expect(turns).toBeGreaterThanOrEqual(Math.floor(n / 10) - 1);
  });

  it("an item that does not validate fails the read with its path in the page and no value", async () => {
    const page = pageOf(ITEMS_PER_SLICE * 3);
    page.data[ITEMS_PER_SLICE + 3] = { ...one, id: "not-a-number", root_password: "hunter2" };
    const err = await readAnswer(databaseListSchema, JSON.stringify(page), from).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LinodeResponseError);
    const issues = (err as LinodeResponseError).issues;
    expect(issues).toEqual([expect.stringMatching(new RegExp(`^data\\.${String(ITEMS_PER_SLICE + 3)}\\.id: `))]);
    expect((err as Error).message).not.toContain("not-a-number");
    // The same issue a whole-page validation gives.
    const whole = databaseListSchema.safeParse(page);
    expect(whole.success).toBe(false);
    expect(whole.error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`)).toEqual(issues);
  });

  it("a page whose envelope does not validate fails before any item is read; a body that is not JSON says so", async () => {
    const page = { ...pageOf(ITEMS_PER_SLICE * 2), pages: "three" };
    await expect(readAnswer(databaseListSchema, JSON.stringify(page), from)).rejects.toMatchObject({ issues: [expect.stringMatching(/^pages: /)] });
    await expect(readAnswer(databaseSchema, "<html>", from)).rejects.toMatchObject({ issues: ["body is not JSON"] });
  });

  it("an answer that is not a list page is read whole, as before", async () => {
    expect(await readAnswer(databaseSchema, JSON.stringify(one), from)).toEqual(camelize(databaseSchema.parse(one)));
  });
});
