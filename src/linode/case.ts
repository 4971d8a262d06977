// The single snake_case <-> camelCase layer: the wire speaks snake_case, everything above
// the client speaks camelCase. Only identifier-like keys are converted, so map keys that
// are data (member IPs, engine_config parameter names kept verbatim by the API) survive
// a round trip unchanged when they carry no separators.

export type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;

export type SnakeCase<S extends string> = S extends `${infer C}${infer Rest}`
  ? C extends Lowercase<C>
    ? `${C}${SnakeCase<Rest>}`
    : `_${Lowercase<C>}${SnakeCase<Rest>}`
  : S;

type Primitive = string | number | boolean | bigint | symbol | null | undefined;

/** Deep camelCase view of a wire (snake_case) type. */
export type Camelize<T> = T extends Primitive
  ? T
  : T extends readonly (infer E)[]
  ? Camelize<E>[]
  : T extends object
    ? { [K in keyof T as K extends string ? CamelCase<K> : K]: Camelize<T[K]> }
    : T;

/** Deep snake_case view of an edge (camelCase) type. */
export type Snakify<T> = T extends Primitive
  ? T
  : T extends readonly (infer E)[]
  ? Snakify<E>[]
  : T extends object
    ? { [K in keyof T as K extends string ? SnakeCase<K> : K]: Snakify<T[K]> }
    : T;

const snakeKey = /^[a-z][a-z0-9]*(_[a-z0-9]+)+$/;
const camelKey = /^[a-z][a-zA-Z0-9]*$/;

export function toCamelKey(key: string): string {
  if (!snakeKey.test(key)) return key;
  return key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

export function toSnakeKey(key: string): string {
  if (!camelKey.test(key)) return key;
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/**
 * Sets `obj[key]` as its own property whatever the key: an answer (or a tenant's parameter
 * name) may carry `__proto__`, which a plain assignment would turn into the object's prototype.
 */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Sets a converted key on a fresh plain object: plain assignment is V8's fast path and is safe
 * for every key but `__proto__` (the only accessor on Object.prototype), which goes through setOwn.
 */
function put(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") setOwn(obj, key, value);
  else obj[key] = value;
}

/**
 * Converted keys by original key. A page repeats the same few dozen keys on every item, and
 * converting each with a regex and a replace callback was most of the cost of reading a page
 * (8 ms for 500 databases). Bounded: keys that are data (member IPs, parameter names) could be
 * many, so past the bound a key is converted, not remembered.
 */
const KEY_MEMO_MAX = 2048;

function memoized(convert: (key: string) => string): (key: string) => string {
  const memo = new Map<string, string>();
  return (key) => {
    const hit = memo.get(key);
    if (hit !== undefined) return hit;
    const converted = convert(key);
    if (memo.size < KEY_MEMO_MAX) memo.set(key, converted);
    return converted;
  };
}

const camelKeyOf = memoized(toCamelKey);
const snakeKeyOf = memoized(toSnakeKey);

function convertKeys(value: unknown, convert: (key: string) => string): unknown {
  if (Array.isArray(value)) return value.map((v) => convertKeys(v, convert));
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const source = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(source)) {
      const v = source[k];
      if (v !== undefined) put(out, convert(k), convertKeys(v, convert));
    }
    return out;
  }
  return value;
}

export function camelize<T>(wire: T): Camelize<T> {
  return convertKeys(wire, camelKeyOf) as Camelize<T>;
}

/** Drops `undefined` members too, so optional fields left unset never reach the wire. */
export function snakify<T>(edge: T): Snakify<T> {
  return convertKeys(edge, snakeKeyOf) as Snakify<T>;
}
