import type { z } from 'zod';
import type { Meter, PlanMeterPrice } from '../../../generated/prisma/sqlite/client.js';
import { formatUsd } from '../../../shared/money.js';
import type { planMeterPrice } from '../../../shared/schemas/plans.js';

export function toPlanMeterPriceWire(row: PlanMeterPrice & { meter: Meter }): z.infer<typeof planMeterPrice> {
  return {
    id: row.id,
    planId: row.planId,
    meter: { id: row.meter.id, key: row.meter.key, unit: row.meter.unit },
    priceUsd: formatUsd(row.priceMicros),
    unitSize: row.unitSize,
    includedUnits: row.includedUnits,
    defaultMaxQuantity: row.defaultMaxQuantity,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
