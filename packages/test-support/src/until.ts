/** How long `until` waits, and how often it asks. */
export interface UntilOptions {
  /** Default 30 s: a bound on the test, never a timing it asserts. */
  timeoutMs?: number;
  /** Default 100 ms. */
  everyMs?: number;
}

/**
 * Asks `probe` until it gives a value (anything but `undefined`, `null` or `false`) and returns
 * it; fails naming `what` once `timeoutMs` has passed.
 */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  options: UntilOptions = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 100));
  }
}
