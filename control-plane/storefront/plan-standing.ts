import type { PlanStanding } from '../../shared/contract.js';
import type { Db } from '../db/client.js';
import type { PaymentSeller } from '../payments/payment-seller.js';
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
  seller: PaymentSeller,
  input: { serviceSlug: string; agentId: string | null; usage: readonly { meterSlug: string }[] },
  now = new Date(),
): Promise<PlanStanding | undefined> {
  if (!input.agentId) return undefined;
  const [catalog, agent] = await Promise.all([
    seller.catalog(),
    db.agent.findUnique({ where: { id: input.agentId }, select: { buyerId: true } }),
  ]);
  const service = catalog.services.get(input.serviceSlug);
  // Something to buy means a plan on sale that prices every meter the call uses.
  const asked = new Set(input.usage.map((item) => item.meterSlug));
  const sells =
    seller.salesEnabled &&
    !!service?.plans.some((plan) => plan.billingMode !== 'payg' && [...asked].every((key) => plan.prices.some((p) => p.meterKey === key)));
  if (!service || !agent) return { reason: 'access_not_found', accessId: null, sells };
  const accesses = await db.access.findMany({
    where: {
      sellerId: seller.id,
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
