import type { PlanStanding } from '../../shared/contract.js';
import type { Db } from '../db/client.js';
import { accessState } from '../usage/allowance.js';
import { heldBy } from './holders.js';

/**
 * Why an identified agent's call was not covered by a plan, for the reason of its 402 (spec:
 * `402 payment_required` reasons): `usage_exhausted` when it (or the human who owns it) holds a
 * live account on the service that did not cover the call (top it up: `accessId`);
 * `access_not_found` otherwise, naming an ended account to renew when there is one. `sells` says
 * whether the storefront has a plan on sale that prices the call. Undefined for anonymous callers.
 */
export async function planStanding(
  db: Db,
  input: { sellerId: string; serviceSlug: string; agentId: string | null; usage: readonly { meterSlug: string }[] },
  now = new Date(),
): Promise<PlanStanding | undefined> {
  if (!input.agentId) return undefined;
  const [seller, agent] = await Promise.all([
    db.seller.findUniqueOrThrow({
      where: { id: input.sellerId },
      select: {
        salesEnabled: true,
        services: {
          where: { slug: input.serviceSlug },
          select: { id: true, plans: { select: { billingMode: true, prices: { select: { meter: { select: { key: true } } } } } } },
        },
      },
    }),
    db.agent.findUnique({ where: { id: input.agentId }, select: { buyerId: true } }),
  ]);
  const service = seller.services[0];
  // Something to buy means a plan on sale that prices every meter the call uses.
  const asked = new Set(input.usage.map((item) => item.meterSlug));
  const sells =
    seller.salesEnabled &&
    !!service?.plans.some((plan) => plan.billingMode !== 'payg' && [...asked].every((key) => plan.prices.some((p) => p.meter.key === key)));
  if (!service || !agent) return { reason: 'access_not_found', accessId: null, sells };
  const accesses = await db.access.findMany({
    where: {
      sellerId: input.sellerId,
      plan: { serviceId: service.id },
      ...heldBy(input.agentId, agent.buyerId),
    },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    select: { id: true, status: true, periodStart: true, periodEnd: true },
  });
  const live = accesses.find((access) => !accessState(access, now));
  if (live) return { reason: 'usage_exhausted', accessId: live.id, sells };
  return { reason: 'access_not_found', accessId: accesses[0]?.id ?? null, sells };
}
