import type { Db, Provider } from './client.js';

/**
 * Makes the rest of the transaction `tx` wait for any other transaction that took a turn on one
 * of the same keys, so that counting rows and inserting one cannot interleave with another
 * request doing the same. On PostgreSQL, transaction-scoped advisory locks, taken in the order
 * given (callers keep one order, or two requests could wait on each other); SQLite runs one write
 * transaction at a time already.
 */
export async function takeTurns(tx: Pick<Db, '$queryRaw'>, provider: Provider, ...keys: string[]): Promise<void> {
  if (provider !== 'postgresql') return;
  for (const key of keys) await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtext(${key}))::text`;
}
