// Reading an answer's body: JSON.parse, the route's zod schema, then camelCase. A page of a
// list (`{ data: [...], page, pages, results }`) is validated and converted a slice of items at
// a time, yielding the event loop between slices: a page of 500 databases holds the loop for
// about 5 ms of work, and the garbage collections that work triggers land inside it, so read
// in one go it kept every other pass and the lease renewal waiting up to ~20 ms (p99) per page.
import { setImmediate as nextTurn } from "node:timers/promises";
import { z } from "zod";
import { camelize, type Camelize } from "./case.ts";
import { LinodeResponseError } from "./errors.ts";

/**
 * Most items of a page validated and converted between two turns of the event loop. At 100 a page of
 * 500 databases costs the CPU it did read whole (bench:answer-parse: 13.5 ms a page against
 * 13.8; at 50 it cost 15.1), and its longest block is about half.
 */
export const ITEMS_PER_SLICE = 100;
/**
 * A slice also ends once it has held the loop this long: a pod under a CPU limit, or V8 under
 * --optimize-for-size (the #! line's), reads an item several times slower than the count assumes.
 */
export const SLICE_MILLIS = 4;
/** Items read between two looks at the clock. */
const CLOCK_EVERY = 10;

/** Where the answer came from, for the error that says it is not what the spec describes. */
export interface AnswerSource { status: number; method: string; route: string }

/** The item schema of a list page's `data`, when `schema` is one (the envelope of schemas/common.ts). */
function itemSchemaOf(schema: z.ZodType): z.ZodType | undefined {
  if (!(schema instanceof z.ZodObject)) return undefined;
  const data = (schema.shape as Record<string, z.ZodType>).data;
  return data instanceof z.ZodArray ? data.element as z.ZodType : undefined;
}

/** Paths and messages only: a value could be a password. */
const issuesOf = (error: z.ZodError, prefix: (string | number)[] = []): string[] =>
  error.issues.map((i) => `${[...prefix, ...i.path.map(String)].join(".") || "(root)"}: ${i.message}`);

/** `text` read as `schema` says, in camelCase; LinodeResponseError when it is not JSON or does not validate. */
export async function readAnswer<S extends z.ZodType>(schema: S, text: string, from: AnswerSource): Promise<Camelize<z.output<S>>> {
  const fail = (issues: string[]): LinodeResponseError => new LinodeResponseError(from.status, issues, { method: from.method, route: from.route });
  let json: unknown;
  try {
    json = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    throw fail(["body is not JSON"]);
  }
  const item = itemSchemaOf(schema);
  const items = json !== null && typeof json === "object" && Array.isArray((json as { data?: unknown }).data) ? (json as { data: unknown[] }).data : undefined;
  if (item === undefined || items === undefined || items.length <= ITEMS_PER_SLICE) {
    const result = schema.safeParse(json);
    if (!result.success) throw fail(issuesOf(result.error));
    return camelize(result.data);
  }
  // The envelope without its items, then the items a slice at a time.
  const head = schema.safeParse({ ...(json as object), data: [] });
  if (!head.success) throw fail(issuesOf(head.error));
  const data: unknown[] = [];
  const issues: string[] = [];
  let sliceStart = 0;
  let sliceBegan = performance.now();
  for (let i = 0; i < items.length; i++) {
    const full = i - sliceStart >= ITEMS_PER_SLICE || ((i - sliceStart) % CLOCK_EVERY === 0 && i > sliceStart && performance.now() - sliceBegan >= SLICE_MILLIS);
    if (full) {
      // A slice's issues fail the read before the next slice is read.
      if (issues.length > 0) throw fail(issues);
      await nextTurn();
      sliceStart = i;
      sliceBegan = performance.now();
    }
    const one = item.safeParse(items[i]);
    if (one.success) data.push(camelize(one.data));
    else issues.push(...issuesOf(one.error, ["data", i]));
  }
  if (issues.length > 0) throw fail(issues);
  return { ...camelize(head.data as Record<string, unknown>), data } as Camelize<z.output<S>>;
}
