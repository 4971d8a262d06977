// The list envelope: page (default 1, min 1), page_size (default 100, 25..500).
import { badRequest } from "./errors.ts";

export interface Envelope<T> {
  data: T[];
  page: number;
  pages: number;
  results: number;
}

export interface PageRequest {
  page: number;
  pageSize: number;
}

function intParam(raw: string | null, name: string, fallback: number, min: number, max: number): number {
  if (raw === null || raw === "") return fallback;
  if (!/^\d+$/.test(raw)) throw badRequest(`${name} must be an integer`, name);
  const value = Number(raw);
  if (value < min || value > max) {
    throw badRequest(max === Number.MAX_SAFE_INTEGER ? `${name} must be at least ${min}` : `${name} must be between ${min} and ${max}`, name);
  }
  return value;
}

export function pageRequest(query: URLSearchParams): PageRequest {
  return {
    page: intParam(query.get("page"), "page", 1, 1, Number.MAX_SAFE_INTEGER),
    pageSize: intParam(query.get("page_size"), "page_size", 100, 25, 500),
  };
}

export function paginate<S, T>(items: readonly S[], req: PageRequest, render: (item: S) => T): Envelope<T> {
  const results = items.length;
  const pages = Math.max(1, Math.ceil(results / req.pageSize));
  const start = (req.page - 1) * req.pageSize;
  return {
    data: items.slice(start, start + req.pageSize).map(render),
    page: req.page,
    pages,
    results,
  };
}
