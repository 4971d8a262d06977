// List endpoints share one shape (page envelope, page/page_size, X-Filter); these two
// helpers are the only place that builds their requests.
import type { z } from "zod";
import type { Camelize } from "./case.ts";
import type { FilterObject } from "./filter.ts";
import type { CallOptions, Transport } from "./http.ts";
import { httpDate } from "./http-date.ts";
import { collectAllPages, MAX_PAGE_SIZE, type Page, type PageRequest } from "./pagination.ts";

export interface ListOptions extends CallOptions, PageRequest {
  /** X-Filter, camelCase field names (e.g. `{label: "db-1"}`, `where(...)`, `and(...)`). */
  filter?: FilterObject;
}

export type ListAllOptions = Omit<ListOptions, "page">;

type EnvelopeSchema = z.ZodType<Page<unknown>>;

export function listPage<S extends EnvelopeSchema>(
  transport: Transport, route: string, params: Record<string, string | number>, schema: S, opts: ListOptions = {},
  onHeaders?: (headers: Readonly<Record<string, string | string[] | undefined>>) => void,
): Promise<Camelize<z.output<S>>> {
  return transport.request({
    method: "GET",
    route,
    rateClass: "list",
    params,
    query: { page: opts.page ?? 1, page_size: opts.pageSize ?? MAX_PAGE_SIZE },
    schema,
    ...(opts.filter ? { filter: opts.filter } : {}),
    ...(onHeaders ? { onHeaders } : {}),
  }, opts);
}

export async function listAll<S extends EnvelopeSchema>(
  transport: Transport, route: string, params: Record<string, string | number>, schema: S, opts: ListAllOptions = {},
): Promise<Camelize<z.output<S>>["data"]> {
  return (await listAllServed(transport, route, params, schema, opts)).data;
}

/**
 * listAll, with when the API served its first page (its Date header; absent when the answer had
 * none): the oldest moment the list can speak for, on the API's own clock.
 */
export async function listAllServed<S extends EnvelopeSchema>(
  transport: Transport, route: string, params: Record<string, string | number>, schema: S, opts: ListAllOptions = {},
): Promise<{ data: Camelize<z.output<S>>["data"]; servedAt?: number }> {
  let servedAt: number | undefined;
  const data = await collectAllPages((page) => listPage(transport, route, params, schema, { ...opts, page }, page === 1 ? (h) => { servedAt = httpDate(h["date"]); } : undefined) as Promise<Page<unknown>>);
  return servedAt === undefined ? { data } : { data, servedAt };
}
