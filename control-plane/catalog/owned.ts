import { ApiError } from '../../shared/errors.js';
import type { Db } from '../db/client.js';

/**
 * Catalog lookups scoped to the caller's organization. A resource of another organization is
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
