/** A dependency (Postgres, Redis) did not answer in time: the gateway answers 503. */
export class DependencyTimeoutError extends Error {
  override readonly name = "DependencyTimeoutError";
  constructor(
    readonly dependency: string,
    readonly ms: number,
  ) {
    super(`${dependency} did not answer within ${ms} ms`);
  }
}

/** Rejects with DependencyTimeoutError when `promise` has not settled within `ms` (the promise itself keeps running). */
export function withTimeout<T>(promise: Promise<T>, ms: number, dependency: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DependencyTimeoutError(dependency, ms)), ms);
  });
  promise.catch(() => undefined);
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
