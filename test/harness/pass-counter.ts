// Counts a controller's completed reconcile passes per key (its onPass hook), so a test can
// wait for the operator to have looked at an object a number of times instead of sleeping:
// how a negative ("nothing was sent", "no write") is proven.

export interface PassCounter {
  /** The hook to give the Controller (deps.onPass). */
  onPass: (key: string) => void;
  /** Passes completed so far for a key. */
  passes: (key: string) => number;
  /** Resolves once `count` more passes of the key have completed. */
  afterPasses: (key: string, count: number, timeoutMillis?: number) => Promise<void>;
}

export function passCounter(): PassCounter {
  const counts = new Map<string, number>();
  const waiters = new Set<() => void>();
  const passes = (key: string): number => counts.get(key) ?? 0;
  return {
    onPass(key) {
      counts.set(key, passes(key) + 1);
      for (const w of waiters) w();
    },
    passes,
    afterPasses(key, count, timeoutMillis = 60_000) {
      const target = passes(key) + count;
      return new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (passes(key) < target) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`${key}: ${String(passes(key))} of ${String(target)} passes within ${String(timeoutMillis)} ms`));
        }, timeoutMillis);
        waiters.add(check);
        check();
      });
    },
  };
}
