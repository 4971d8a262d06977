// Keys a tenant writes (engineConfig parameters, extraData, labels, selectors: any map in a
// spec) must never become property names that reach into an ordinary object's prototype
// chain: `node[k] ??= {}` with k = "constructor" then "prototype" writes into
// Object.prototype, and every object of the process changes under every namespace. These
// keys are refused three times over: by the CRD (a CEL rule on every map, generated), by the
// runtime before a kind parses a spec (InvalidSpec), and by the code that walks maps (objects
// with no prototype, Object.hasOwn).
import type { CelRule } from "./schema-rules.ts";

/** Property names that reach an ordinary object's prototype (or its constructor's). */
export const FORBIDDEN_KEYS: readonly string[] = ["__proto__", "constructor", "prototype"];

const forbidden = new Set(FORBIDDEN_KEYS);

export const isForbiddenKey = (key: string): boolean => forbidden.has(key);

/** The CEL rule a map's schema carries so the API server refuses these keys at admission. */
export const forbiddenKeysRule: CelRule = {
  // Key look-ups, not a comprehension: a constant cost whatever the map's size, so the API
  // server's cost budget holds on maps without maxProperties (label selectors).
  rule: FORBIDDEN_KEYS.map((k) => `!('${k}' in self)`).join(" && "),
  message: `keys ${FORBIDDEN_KEYS.join(", ")} are not allowed: they name an object's prototype`,
};

/**
 * The paths (dotted, at most `limit`) where `value` has a forbidden key, at any depth. JSON
 * parsing makes `__proto__` an own property, so every key is seen.
 */
export function forbiddenKeyPaths(value: unknown, limit = 5): string[] {
  const out: string[] = [];
  const walk = (v: unknown, path: string, depth: number): void => {
    if (out.length >= limit || depth > 64 || v === null || typeof v !== "object") return;
    if (Array.isArray(v)) {
      v.forEach((x, i) => { walk(x, `${path}[${String(i)}]`, depth + 1); });
      return;
    }
    for (const k of Object.keys(v)) {
      const at = path === "" ? k : `${path}.${k}`;
      if (forbidden.has(k)) out.push(at);
      walk((v as Record<string, unknown>)[k], at, depth + 1);
    }
  };
  walk(value, "", 0);
  return out;
}

/** A map with no prototype: any string is a plain key of it, none reaches Object.prototype. */
export function emptyMap<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/**
 * Sets `obj[key]` as its own property whatever the key: a plain assignment with `__proto__`
 * would replace the object's prototype instead.
 */
export function setOwn<T>(obj: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** `obj[key]` only when `obj` has it as its own property (never an inherited one such as toString). */
export function ownValue<T>(obj: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return obj !== undefined && Object.hasOwn(obj, key) ? obj[key] : undefined;
}
