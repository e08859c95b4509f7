import type { Db } from '../../control-plane/db/client.js';
import { newId } from '../../shared/ids.js';

export type SeededCatalog = { serviceId: string; meterId: string; planId: string; priceId: string };

/**
 * One service with one meter priced on one plan, written straight into the database to keep
 * tests and benchmarks fast. The catalog tests build the same through the management API
 * (test/control-plane/catalog/), so nothing here is reachable only by seeding.
 */
export async function seedPricedService(
  db: Db,
  args: {
    organizationId: string;
    sellerId: string;
    service?: { slug: string; name: string };
    meter?: { key: string; unit: string };
    plan?: { slug: string; name: string; billingMode: 'payg' | 'credit' };
    priceMicros: bigint;
    includedUnits?: number;
    /** Fixed ids, for tests that assert them. */
    ids?: Partial<SeededCatalog>;
  },
): Promise<SeededCatalog> {
  const { organizationId, sellerId } = args;
  const service = args.service ?? { slug: 'search', name: 'Search' };
  const meter = args.meter ?? { key: 'calls', unit: 'call' };
  const plan = args.plan ?? { slug: 'per-call', name: 'Per call', billingMode: 'payg' };
  const ids: SeededCatalog = {
    serviceId: args.ids?.serviceId ?? newId('service'),
    meterId: args.ids?.meterId ?? newId('meter'),
    planId: args.ids?.planId ?? newId('plan'),
    priceId: args.ids?.priceId ?? newId('planMeterPrice'),
  };
  await db.service.create({ data: { id: ids.serviceId, organizationId, sellerId, ...service } });
  await db.meter.create({ data: { id: ids.meterId, organizationId, serviceId: ids.serviceId, ...meter } });
  await db.plan.create({
    data: { id: ids.planId, organizationId, serviceId: ids.serviceId, ...plan, interval: 'none', verifiedEmailPolicy: 'off' },
  });
  await db.planMeterPrice.create({
    data: {
      id: ids.priceId,
      organizationId,
      planId: ids.planId,
      meterId: ids.meterId,
      priceMicros: args.priceMicros,
      unitSize: 1,
      includedUnits: args.includedUnits ?? 0,
    },
  });
  return ids;
}
