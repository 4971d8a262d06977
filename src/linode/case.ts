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

function convertKeys(value: unknown, convert: (key: string) => string): unknown {
  if (Array.isArray(value)) return value.map((v) => convertKeys(v, convert));
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v !== undefined) setOwn(out, convert(k), convertKeys(v, convert));
    }
    return out;
  }
  return value;
}

export function camelize<T>(wire: T): Camelize<T> {
  return convertKeys(wire, toCamelKey) as Camelize<T>;
}

/** Drops `undefined` members too, so optional fields left unset never reach the wire. */
export function snakify<T>(edge: T): Snakify<T> {
  return convertKeys(edge, toSnakeKey) as Snakify<T>;
}
