// Route templates compiled to regular expressions. `{engineId+}` matches across a slash so
// both `/engines/mysql/8` and the URL-encoded `/engines/mysql%2F8` reach the same handler.
import type { Route } from "./context.ts";

interface Compiled {
  route: Route;
  regex: RegExp;
  names: string[];
}

export type Match =
  | { kind: "found"; route: Route; params: Record<string, string> }
  | { kind: "method"; allowed: string[] }
  | { kind: "none" };

export class Router {
  readonly #routes: Compiled[] = [];

  add(...routes: Route[]): void {
    for (const route of routes) {
      const names: string[] = [];
      const source = route.template.replace(/[.*?^$()|[\]\\]/g, "\\$&").replace(/\{(\w+)(\+?)\}/g, (_m, name: string, plus: string) => {
        names.push(name);
        return plus === "+" ? "(.+)" : "([^/]+)";
      });
      this.#routes.push({ route, regex: new RegExp(`^${source}/?$`), names });
    }
  }

  get routes(): Route[] {
    return this.#routes.map((r) => r.route);
  }

  match(method: string, path: string): Match {
    const allowed: string[] = [];
    for (const c of this.#routes) {
      const m = c.regex.exec(path);
      if (m === null) continue;
      if (c.route.method !== method) {
        allowed.push(c.route.method);
        continue;
      }
      const params: Record<string, string> = {};
      c.names.forEach((name, i) => {
        const raw = m[i + 1] ?? "";
        try {
          params[name] = decodeURIComponent(raw);
        } catch {
          params[name] = raw;
        }
      });
      return { kind: "found", route: c.route, params };
    }
    return allowed.length > 0 ? { kind: "method", allowed } : { kind: "none" };
  }
}

export function intParam(params: Record<string, string>, name: string): number {
  const raw = params[name] ?? "";
  return /^\d{1,15}$/.test(raw) ? Number(raw) : -1;
}
