import type { Prisma } from '../../generated/prisma/sqlite/client.js';
import { recordChange } from '../storefront/account-changes.js';

/**
 * Card money pulled back from an account (a refund, a lost dispute): its cumulative
 * `creditReversedUsd` rises by `micros`, what is left of its balance falls by as much (never below
 * zero: credit already spent stays spent), and a new account write carries the new total to a
 * stateful seller, whose SDK nets granted − reversed and clamps at zero (spec: account write).
 */
export async function reverseCredit(tx: Prisma.TransactionClient, accessId: string, micros: bigint): Promise<void> {
  if (micros <= 0n) return;
  // The guarding write first: on PostgreSQL it holds the account's row until commit, as a usage draw does.
  const access = await tx.access.update({
    where: { id: accessId },
    data: { creditReversedMicros: { increment: micros }, stateVersion: { increment: 1 } },
  });
  const balance = access.balanceMicros > micros ? access.balanceMicros - micros : 0n;
  await tx.access.update({ where: { id: accessId }, data: { balanceMicros: balance } });
  await recordChange(tx, accessId);
}
