/**
 * `promise`'s value, or undefined once `ms` have passed, whichever comes first. The promise goes
 * on either way; a rejection before the deadline is passed on.
 */
export function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const lapse = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([promise, lapse]).finally(() => clearTimeout(timer));
}
