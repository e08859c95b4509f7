import type { z } from 'zod';
import type { Plan } from '../../../generated/prisma/sqlite/client.js';
import { formatUsd } from '../../../shared/money.js';
import type { plan } from '../../../shared/schemas/plans.js';

type PlanWire = z.infer<typeof plan>;

export function toPlanWire(row: Plan): PlanWire {
  return {
    id: row.id,
    serviceId: row.serviceId,
    name: row.name,
    slug: row.slug,
    kind: row.kind as PlanWire['kind'],
    billingMode: row.billingMode as PlanWire['billingMode'],
    interval: row.interval as PlanWire['interval'],
    basePriceUsd: formatUsd(row.basePriceMicros),
    includedCreditUsd: formatUsd(row.includedCreditMicros),
    includedCreditUnits: row.includedCreditUnits,
    includedCreditUnitLabel: row.includedCreditUnitLabel,
    minimumPurchaseUsd: formatUsd(row.minimumPurchaseMicros),
    verifiedEmailPolicy: row.verifiedEmailPolicy as PlanWire['verifiedEmailPolicy'],
    maxClaims: row.maxClaims,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
