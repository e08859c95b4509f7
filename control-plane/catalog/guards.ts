import type { Prisma } from '../../generated/prisma/sqlite/client.js';
import { ApiError } from '../../shared/errors.js';
import type { Db } from '../db/client.js';
import { PURCHASE_KINDS } from '../payments/attempt-claim.js';

/**
 * What every catalog route goes through: lookups scoped to the caller's organization, writes that
 * mark the seller changed, and deletes refused while buyers hold the plans.
 *
 * Lookups are scoped to the caller's organization. A resource of another organization is
 * reported exactly like a missing one (404 with the resource's own code), so ids of other
 * organizations cannot be probed.
 */

type Reader = Pick<Db, 'seller' | 'service' | 'meter' | 'plan' | 'planMeterPrice'>;

export async function ownedSeller(db: Reader, organizationId: string, id: string) {
  const seller = await db.seller.findFirst({ where: { id, organizationId } });
  if (!seller) throw new ApiError('seller_not_found');
  return seller;
}

export async function ownedService(db: Reader, organizationId: string, id: string) {
  const service = await db.service.findFirst({ where: { id, organizationId } });
  if (!service) throw new ApiError('service_not_found');
  return service;
}

export async function ownedMeter(db: Reader, organizationId: string, id: string) {
  // With the seller behind it: every write to a meter marks that seller's catalog changed.
  const meter = await db.meter.findFirst({ where: { id, organizationId }, include: { service: { select: { sellerId: true } } } });
  if (!meter) throw new ApiError('meter_not_found');
  return meter;
}

export async function ownedPlan(db: Reader, organizationId: string, id: string) {
  const plan = await db.plan.findFirst({ where: { id, organizationId }, include: { service: { select: { sellerId: true } } } });
  if (!plan) throw new ApiError('plan_not_found');
  return plan;
}

export async function ownedPlanMeterPrice(db: Reader, organizationId: string, id: string) {
  const price = await db.planMeterPrice.findFirst({
    where: { id, organizationId },
    include: { plan: { include: { service: { select: { sellerId: true } } } }, meter: true },
  });
  if (!price) throw new ApiError('plan_meter_price_not_found');
  return price;
}

/**
 * Runs a write to a seller's catalog in one transaction that also marks the seller changed, so a
 * proxy polling for changed sellers never misses it (`touchSeller`).
 */
export function changeCatalog<T>(db: Db, sellerId: string, write: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  return db.$transaction(async (tx) => {
    const result = await write(tx);
    await touchSeller(tx, sellerId);
    return result;
  });
}

type Tx = Pick<Db, 'seller'>;

/**
 * Marks a seller's catalog as changed. Proxies cache what they need per seller and poll for
 * sellers changed since their last look (`internal.sellersChangedSince`), so every write that
 * touches a seller, its hostnames, secrets, services, meters, plans or prices must call this,
 * inside the same transaction when there is one.
 */
export async function touchSeller(db: Tx, sellerId: string): Promise<void> {
  await db.seller.updateMany({ where: { id: sellerId }, data: { updatedAt: new Date() } });
}

type AccessFilter = NonNullable<Parameters<Db['access']['count']>[0]>['where'];

/**
 * Plans that buyers hold accounts on cannot go: the accounts are paid obligations that point at
 * them. Deleting them is refused with `resource_in_use` (409) instead.
 */
export async function refuseWhileBuyersHoldPlans(tx: Pick<Db, 'access'>, where: AccessFilter): Promise<void> {
  const accounts = await tx.access.count({ where });
  if (accounts) throw new ApiError('resource_in_use', `Buyers hold ${accounts} account(s) on plans this would delete.`);
}

/**
 * Nor can plans a purchase is still open for (asked and not lapsed, paid, settling, or settled
 * without its account yet): the payment would have nothing to open.
 */
export async function refuseWhilePurchasesOpen(tx: Pick<Db, 'paymentAttempt'>, planIds: readonly string[]): Promise<void> {
  if (!planIds.length) return;
  const open = await tx.paymentAttempt.count({
    where: {
      planId: { in: [...planIds] },
      kind: { in: [...PURCHASE_KINDS] },
      OR: [
        { status: { in: ['in_flight', 'holding', 'reserved', 'settling'] } },
        { status: 'challenge_created', expiresAt: { gt: new Date() } },
        { status: 'settled', accessId: null },
      ],
    },
  });
  if (open) throw new ApiError('resource_in_use', `${open} purchase(s) of plans this would delete are still being paid.`);
}
