// Which resource manages each cloud object, so that a shared list finding an object changed
// (ListCache's onChange) wakes that resource: the sweep that finds drift, so a settled object
// need not poll on its own.

export class ListWakes {
  private readonly keyOf = new Map<number, string>();
  private readonly wake: (key: string) => void;
  private readonly wanted: (key: string) => boolean;

  /** `wanted`: whether a resource is to be woken (default: any); one that looks often anyway need not. */
  constructor(wake: (key: string) => void, wanted: (key: string) => boolean = () => true) {
    this.wake = wake;
    this.wanted = wanted;
  }

  get size(): number {
    return this.keyOf.size;
  }

  /** The resource `key` manages cloud object `id` (undefined: none does any more). */
  readonly seen = (id: number, key: string | undefined): void => {
    if (key === undefined) this.keyOf.delete(id);
    else this.keyOf.set(id, key);
  };

  /** The resource `key` is gone: it no longer manages `id` (unless another resource has taken it since). */
  forget(id: number, key: string): void {
    if (this.keyOf.get(id) === key) this.keyOf.delete(id);
  }

  /** A list found cloud object `id` changed (or new, or gone). */
  readonly changed = (id: number): void => {
    const key = this.keyOf.get(id);
    if (key !== undefined && this.wanted(key)) this.wake(key);
  };
}
