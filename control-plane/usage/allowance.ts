import type { UsageDenial } from '../../shared/usage.js';
import { meterKey, priceKey, type UsageCatalog } from './catalog.js';
import { type Denied, denied, furthest } from './denials.js';
import { accessPeriodStart, freePoolPeriodStart } from './periods.js';
import { affordable, bill, type CreditUnitPool, mergeItems, type PriceTerms } from './pricing.js';
import type { AccessRow, UsageReader } from './reader.js';
import type { Purpose, Resolved } from './resolve.js';

/**
 * Whether the usage of a request fits what stands behind it, and if so, how it would be drawn.
 * Nothing here writes: a check stops at the answer, a report commits one of the draws
 * (draw.ts), re-pricing it there against fresh counts.
 */

/** An item as asked: a report's quantity, or for a check the most it may use (null: the price's default). */
export type Demand = { meterSlug: string; quantity: bigint | null };

export type DrawItem = { meterId: string; quantity: bigint; terms: PriceTerms; includedUsed: bigint };

export type Draw =
  | { kind: 'payment'; paymentAttemptId: string; items: DrawItem[] }
  /** `pool`: the plan's credit units this period, when it grants any. */
  | { kind: 'access'; access: AccessRow; periodStart: Date; items: DrawItem[]; pool: CreditUnitPool | undefined }
  | { kind: 'free'; buyerId: string; periodStart: Date; items: DrawItem[] };

/** The draws that would fit, in the order to try them (more than one only for several accesses). */
export type Allowed = { ok: true; draws: [Draw, ...Draw[]] };

export async function allowance(
  reader: UsageReader,
  resolved: Resolved,
  demands: readonly Demand[],
  purpose: Purpose,
  now: Date,
): Promise<Allowed | Denied> {
  const { backing, service } = resolved;

  // Access state comes before the items in the order of precedence (denials.ts).
  const live = backing.kind === 'access' ? backing.accesses.filter((access) => !accessState(access, now)) : [];
  if (backing.kind === 'access' && live.length === 0) {
    return denied(backing.accesses.map((access) => accessState(access, now)!).reduce(furthest));
  }

  const catalog = await resolved.catalog();
  const meters = metersByKey(catalog, service.id, demands);
  if (meters.size < new Set(demands.map((d) => d.meterSlug)).size) return denied('meter_not_found');
  const { prices } = catalog;

  if (backing.kind === 'payment') {
    const items = priceDemands(demands, backing.planId, meters, prices);
    if (!Array.isArray(items)) return items;
    // A payment covers what it was challenged for; a report beyond that is recorded and settlement caps it.
    if (purpose === 'check' && items.some((item) => item.quantity > (backing.paid.get(item.meterSlug) ?? 0n)))
      return denied('usage_exhausted');
    // Included units belong to plans and to free mode, never to a per-call payment.
    const paidItems = items.map((item) => ({ ...item, terms: { ...item.terms, includedUnits: 0n }, includedUsed: 0n }));
    return { ok: true, draws: [{ kind: 'payment', paymentAttemptId: backing.paymentAttemptId, items: paidItems }] };
  }

  if (backing.kind === 'free') {
    const priced = priceDemands(demands, backing.plan.id, meters, prices);
    if (!Array.isArray(priced)) return priced;
    const periodStart = freePoolPeriodStart(backing.plan.interval, now);
    const used = await freePoolUsed(reader, backing.buyerId, periodStart, priced);
    const items = priced.map((item) => ({ ...item, includedUsed: used.get(item.meterId) ?? 0n }));
    if (!affordable(bill(items), null)) return denied('usage_exhausted');
    return { ok: true, draws: [{ kind: 'free', buyerId: backing.buyerId, periodStart, items }] };
  }

  const pricedByAccess = live.map((access) => ({ access, priced: priceDemands(demands, access.planId, meters, prices) }));
  // Counts matter only where a price includes units or the plan grants credit units.
  const counted = pricedByAccess.filter(
    ({ access, priced }) =>
      Array.isArray(priced) && (catalog.creditUnits.has(access.planId) || priced.some((item) => item.terms.includedUnits > 0n)),
  );
  const used = await accessUsed(
    reader,
    counted.map(({ access }) => access),
    [...meters.values()],
  );

  const draws: Draw[] = [];
  let closest: UsageDenial = 'meter_not_priced';
  for (const { access, priced } of pricedByAccess) {
    if (!Array.isArray(priced)) continue;
    const periodStart = accessPeriodStart(access);
    const items = priced.map((item) => ({ ...item, includedUsed: used.get(usageKey(access.id, item.meterId, periodStart)) ?? 0n }));
    const granted = catalog.creditUnits.get(access.planId);
    const pool = granted === undefined ? undefined : { granted, used: used.get(usageKey(access.id, null, periodStart)) ?? 0n };
    if (affordable(bill(items, pool), access.creditGrantedMicros === null ? null : access.balanceMicros))
      draws.push({ kind: 'access', access, periodStart, items, pool });
    else closest = 'usage_exhausted';
  }
  const [first, ...rest] = draws;
  return first ? { ok: true, draws: [first, ...rest] } : denied(closest);
}

/** `access_inactive` or `plan_expired` when the access cannot be drawn on now; undefined when it can. */
export function accessState(access: Pick<AccessRow, 'status' | 'periodStart' | 'periodEnd'>, now: Date): UsageDenial | undefined {
  if (access.status !== 'active' || (access.periodStart !== null && access.periodStart > now)) return 'access_inactive';
  if (access.periodEnd !== null && access.periodEnd <= now) return 'plan_expired';
  return undefined;
}

type PricedDemand = Omit<DrawItem, 'includedUsed'> & { meterSlug: string };

/**
 * Each demand priced on one plan, one item per meter. `meter_not_priced` when the plan does not
 * price a meter, or a check names no quantity and the price has no `defaultMaxQuantity`.
 */
function priceDemands(
  demands: readonly Demand[],
  planId: string,
  meters: Map<string, string>,
  prices: UsageCatalog['prices'],
): PricedDemand[] | Denied {
  const items: PricedDemand[] = [];
  for (const demand of demands) {
    const meterId = meters.get(demand.meterSlug)!;
    const price = prices.get(priceKey(planId, meterId));
    const quantity = demand.quantity ?? price?.defaultMaxQuantity ?? null;
    if (!price || quantity === null) return denied('meter_not_priced');
    items.push({ meterSlug: demand.meterSlug, meterId, quantity, terms: price });
  }
  return mergeItems(items);
}

/** The meters the demands name, by key: those of the service that exist. */
function metersByKey(catalog: UsageCatalog, serviceId: string, demands: readonly Demand[]): Map<string, string> {
  const meters = new Map<string, string>();
  for (const { meterSlug } of demands) {
    const id = catalog.meters.get(meterKey(serviceId, meterSlug));
    if (id !== undefined) meters.set(meterSlug, id);
  }
  return meters;
}

/** `meterId` null: the access's credit units. */
const usageKey = (ownerId: string, meterId: string | null, periodStart: Date) => `${ownerId} ${meterId ?? '*'} ${periodStart.getTime()}`;

/** Included units drawn so far this period, per access and meter, and per access from its credit units. */
async function accessUsed(reader: UsageReader, accesses: AccessRow[], meterIds: string[]): Promise<Map<string, bigint>> {
  if (accesses.length === 0 || meterIds.length === 0) return new Map();
  const rows = await reader.accessUsage(
    accesses.map((a) => a.id),
    meterIds,
    [...new Map(accesses.map((a) => [accessPeriodStart(a).getTime(), accessPeriodStart(a)])).values()],
  );
  return new Map(rows.map((row) => [usageKey(row.accessId, row.meterId, row.periodStart), row.unitsUsed]));
}

/** Included units of the buyer's free pool drawn so far this period, per meter. */
async function freePoolUsed(
  reader: UsageReader,
  buyerId: string,
  periodStart: Date,
  items: readonly { meterId: string }[],
): Promise<Map<string, bigint>> {
  if (items.length === 0) return new Map();
  const rows = await reader.freePoolUsage(
    buyerId,
    periodStart,
    items.map((item) => item.meterId),
  );
  return new Map(rows.map((row) => [row.meterId, row.unitsUsed]));
}
