import { type PaymentAttempt, Prisma } from '../../../generated/prisma/sqlite/client.js';
import type { Adjustment } from '../../../shared/contract.js';
import { bigintOf, type Sql } from '../../db/sql.js';
import type { CatalogPrice, PaymentSeller } from '../payment-seller.js';
import { payPerCallCost } from '../price.js';

type Challenged = { meterSlug: string; quantity: number };

/**
 * The prices of the plan the request was challenged under, read before settlement's transaction
 * (the catalog is read outside it, and SQLite's one connection is that transaction's meanwhile).
 */
export async function planPrices(
  attempt: Pick<PaymentAttempt, 'planId'>,
  seller: () => Promise<PaymentSeller | null>,
): Promise<CatalogPrice[]> {
  if (!attempt.planId) return [];
  const catalog = await (await seller())?.catalog();
  return catalog?.plans.get(attempt.planId)?.prices ?? [];
}

/**
 * What the request costs at min(reported, authorized) per meter, and where the two differ. Read in
 * the transaction that has just moved the attempt out of `in_flight`: usage reports take turns
 * with it on the attempt's row (attempt-status.ts › holdOpenForReports), so every report this
 * charge leaves out is refused, none recorded and never billed.
 */
export async function settledCharge(
  tx: Sql,
  attempt: Pick<PaymentAttempt, 'requestId' | 'usageJson' | 'amountMicros'>,
  prices: CatalogPrice[],
): Promise<{ charged: bigint; adjusted: Adjustment[] }> {
  const authorized = attempt.amountMicros;
  const items = (
    await tx.all<{ meterId: string; quantity: unknown }>(Prisma.sql`SELECT i."meterId", i."quantity" FROM "UsageEventItem" i
      JOIN "UsageEvent" e ON e."id" = i."usageEventId" WHERE e."requestId" = ${attempt.requestId}`)
  ).map((item) => ({ meterId: item.meterId, quantity: bigintOf(item.quantity) }));
  if (items.length === 0) return { charged: authorized, adjusted: [] };

  const byMeterId = new Map(prices.map((p) => [p.meterId, p]));
  const reported = new Map<string, bigint>();
  for (const item of items) {
    const key = byMeterId.get(item.meterId)?.meterKey ?? item.meterId;
    reported.set(key, (reported.get(key) ?? 0n) + item.quantity);
  }
  const challenged = JSON.parse(attempt.usageJson) as Challenged[];
  // A meter the 402 named twice was authorized for the sum, as usage counts it.
  const cap = new Map<string, bigint>();
  for (const c of challenged) cap.set(c.meterSlug, (cap.get(c.meterSlug) ?? 0n) + BigInt(c.quantity));
  let charged = 0n;
  const adjusted: Adjustment[] = [];
  for (const [meterSlug, quantity] of reported) {
    const authorizedQuantity = cap.get(meterSlug) ?? 0n;
    const settled = quantity < authorizedQuantity ? quantity : authorizedQuantity;
    if (settled !== quantity) adjusted.push({ meterSlug, reportedQuantity: Number(quantity), settledQuantity: Number(settled) });
    const price = prices.find((p) => p.meterKey === meterSlug);
    if (price) charged += payPerCallCost(settled, price);
  }
  return { charged: charged < authorized ? charged : authorized, adjusted };
}
