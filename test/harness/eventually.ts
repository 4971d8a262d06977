// Waiting on asynchronous events in unit tests of caches and stores.

/** Retries an assertion until it holds (events arrive asynchronously, later on a busy machine). */
export async function eventually(assertion: () => void, timeoutMillis = 5_000): Promise<void> {
  const end = Date.now() + timeoutMillis;
  for (;;) {
    try {
      assertion();
      return;
    } catch (err) {
      if (Date.now() > end) throw err;
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}
