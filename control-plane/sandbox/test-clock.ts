import type { Prisma } from '../../generated/prisma/sqlite/client.js';
import { ApiError } from '../../shared/errors.js';
import type { Db } from '../db/client.js';
import { recordChange } from '../storefront/account-changes.js';
import { refuseLive } from './sandbox-seller.js';

type Tx = Prisma.TransactionClient;

/**
 * A test clock for one account (docs/decisions.md#D-231): the account is moved `seconds` into its
 * future by moving its times that much into the past (period start and end, the end the seller
 * has, a cancellation), with the usage counted per period start moved alike, so included units
 * stay counted. Everything after reads the account as it reads any: past its end, the usage check
 * says `plan_expired` and the storefront offers a renewal, which `/extend` makes as for any
 * account. The change raises the account's version, so a stateful seller receives an account
 * write with the moved period, as after any change.
 */
export async function advanceAccountClock(db: Db, organizationId: string, accessId: string, seconds: number) {
  return db.$transaction(async (tx) => {
    const found = await tx.access.findUnique({
      where: { id: accessId },
      include: { seller: { select: { organizationId: true, sandbox: true, slug: true } } },
    });
    if (!found || found.seller.organizationId !== organizationId) throw new ApiError('access_not_found', 'No such account.');
    refuseLive(found.seller);
    // Raising the version first takes the account's row lock (account-changes.ts): no purchase
    // or draw moves it meanwhile.
    const access = await tx.access.update({ where: { id: accessId }, data: { stateVersion: { increment: 1 } } });
    const back = (date: Date | null) => (date === null ? null : new Date(date.getTime() - seconds * 1000));
    await tx.access.update({
      where: { id: accessId },
      data: {
        periodStart: back(access.periodStart),
        periodEnd: back(access.periodEnd),
        appliedPeriodEnd: back(access.appliedPeriodEnd),
        canceledAt: back(access.canceledAt),
      },
    });
    await moveUsagePeriods(tx, accessId, back);
    await recordChange(tx, accessId);
    return tx.access.findUniqueOrThrow({ where: { id: accessId } });
  });
}

// Earliest first: each moves to a start no row holds any more, whatever the gaps between periods.
async function moveUsagePeriods(tx: Tx, accessId: string, back: (date: Date) => Date | null): Promise<void> {
  for (const row of await tx.accessMeterUsage.findMany({ where: { accessId }, orderBy: { periodStart: 'asc' } })) {
    await tx.accessMeterUsage.update({
      where: { accessId_meterId_periodStart: { accessId, meterId: row.meterId, periodStart: row.periodStart } },
      data: { periodStart: back(row.periodStart)! },
    });
  }
  for (const row of await tx.accessCreditUnitsUsage.findMany({ where: { accessId }, orderBy: { periodStart: 'asc' } })) {
    await tx.accessCreditUnitsUsage.update({
      where: { accessId_periodStart: { accessId, periodStart: row.periodStart } },
      data: { periodStart: back(row.periodStart)! },
    });
  }
}
