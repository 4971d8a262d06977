// Lists are read whole at the API's maximum page size, so a steady-state reconcile of N
// objects costs ceil(N/500) requests instead of one GET per object.

export const MAX_PAGE_SIZE = 500;

export interface Page<T> {
  data: T[];
  page: number;
  pages: number;
  results: number;
}

export interface PageRequest {
  page?: number;
  /** 25..500 (the API's bounds); defaults to 500 in list helpers. */
  pageSize?: number;
}

/**
 * Fetches page 1, then the remaining pages in order. Objects that move between pages
 * while we read (a create or delete shifts the offsets) are de-duplicated by id.
 */
export async function collectAllPages<T>(fetchPage: (page: number) => Promise<Page<T>>, maxPages = 1000): Promise<T[]> {
  const first = await fetchPage(1);
  const items = [...first.data];
  const pages = Math.min(first.pages, maxPages);
  for (let page = 2; page <= pages; page++) {
    const next = await fetchPage(page);
    items.push(...next.data);
  }
  return dedupeById(items);
}

function dedupeById<T>(items: T[]): T[] {
  const seen = new Set<unknown>();
  return items.filter((item) => {
    const id = item !== null && typeof item === "object" ? (item as { id?: unknown }).id : undefined;
    if (id === undefined) return true;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}
