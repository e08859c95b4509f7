import { z } from 'zod';
import { isId, isRecordedRequestId } from '../../shared/ids.js';
import { type AttemptStatus, CLAIMED_STATUSES, TAKES_REPORTS } from '../payments/attempt-status.js';
import { type Denied, denied } from './denials.js';
import type { AccessRow, RequestRow, ServiceRow, UsageReader } from './reader.js';

/**
 * What stands behind a request id (spec: Usage check › access_not_found, and Headers on proxied
 * requests › identity rules). In this order:
 *
 * 1. a per-call payment for this request (a payment attempt of kind `call` that is live), or
 * 2. for a request in free mode, the buyer's free included units, or
 * 3. the accesses of the request's agent, and of the buyer that owns the agent.
 *
 * The request's own record names the agent and the buyer as the proxy saw them; the buyer id
 * counts only while the agent still belongs to that buyer, so a buyer id never unlocks what the
 * agent itself would not be given.
 */

/** A check asks about a request being served; a report records what a request used. */
export type Purpose = 'check' | 'report';

/**
 * A payment stands behind its request while the paid retry is forwarded (`in_flight`); reports
 * are also taken once an identity-only payment is `delivered`. Not once settlement has started:
 * the charge is priced from the usage reported by then, so a later report would be recorded and
 * never billed. It is refused instead, here and, for one that raced the start of settlement, where
 * it is written (payments/attempt-status.ts › holdOpenForReports).
 */
export const LIVE_PAYMENT_STATUSES: Record<Purpose, readonly AttemptStatus[]> = {
  check: ['in_flight'],
  report: TAKES_REPORTS,
};

/** Why a report for a paid request is refused once its payment has left `LIVE_PAYMENT_STATUSES`. */
export const PAYMENT_CLOSED =
  'The request’s payment has started settling or is done: report a paid request’s usage before answering it, or in its hub-usage header.';

// A payment claimed for a request (CLAIMED_STATUSES), live or done: once paid for, a request is
// the payment's alone. After settlement (or release) nothing stands behind it, and a late report
// never falls through to the agent's plan, which would charge a call already paid.

export type Backing =
  | { kind: 'payment'; paymentAttemptId: string; planId: string; paid: Map<string, bigint> }
  | { kind: 'free'; buyerId: string; plan: { id: string; interval: string } }
  | { kind: 'access'; accesses: AccessRow[] };

export type Resolved = { ok: true; service: ServiceRow; requestId: string; backing: Backing };

export async function resolveRequest(
  reader: UsageReader,
  organizationId: string,
  requestId: string,
  serviceSlug: string,
  purpose: Purpose,
): Promise<Resolved | Denied> {
  const wellFormed = isId('request', requestId);
  const [services, payment, stored] = await Promise.all([
    reader.servicesNamed(organizationId, serviceSlug),
    wellFormed ? reader.callPayment(organizationId, requestId, CLAIMED_STATUSES) : undefined,
    wellFormed ? reader.request(requestId) : undefined,
  ]);
  if (services.length === 0) return denied('service_not_found');
  const record = stored ?? (!payment && isRecordedRequestId(requestId) ? await recordOnItsWay(reader, requestId) : undefined);

  if (payment) {
    if (!LIVE_PAYMENT_STATUSES[purpose].includes(payment.status as AttemptStatus)) return denied('access_not_found', PAYMENT_CLOSED);
    const service = services.find((s) => s.id === payment.serviceId);
    if (!service || !payment.planId) return denied('access_not_found');
    return {
      ok: true,
      service,
      requestId,
      backing: { kind: 'payment', paymentAttemptId: payment.id, planId: payment.planId, paid: paidUsage(payment.usageJson) },
    };
  }

  // A seller's service slugs are unique per seller, not per organization: the request's seller picks.
  const service = record && services.find((s) => s.sellerId === record.sellerId);
  if (!record || !service || (record.serviceId !== null && record.serviceId !== service.id)) return denied('access_not_found');
  const { agentId, agent } = record;
  if (!agentId || !agent) return denied('access_not_found');
  const owner = agent.buyerId !== null && (record.buyerId === null || record.buyerId === agent.buyerId) ? agent.buyerId : null;

  if (record.mode === 'free') {
    // Free mode is served only to claimed agents whose owner has a verified email (spec: hub-mode).
    if (!owner || !agent.claimed || !agent.ownerEmailVerified) return denied('access_not_found');
    const plan = await reader.paygPlan(service.id);
    if (!plan) return denied('access_not_found');
    return { ok: true, service, requestId, backing: { kind: 'free', buyerId: owner, plan } };
  }

  // The agent's own accesses first, then its owner's (shared by the owner's agents), each group
  // oldest first: the order a report draws from them in.
  const rows = await reader.accesses(service, agentId, owner);
  const accesses = [...rows.filter((row) => row.agentId === agentId), ...rows.filter((row) => row.agentId !== agentId)];
  if (accesses.length === 0) return denied('access_not_found');
  return { ok: true, service, requestId, backing: { kind: 'access', accesses } };
}

/**
 * Pauses between looks for a record the proxy is still storing, ~2 s in all. The proxy sends it as
 * it forwards the request, so it is normally there before the seller asks, or within milliseconds.
 */
const ARRIVAL_PAUSES_MS = [5, 10, 20, 40, 80, 160, 320, 640, 725];

/**
 * The record of an identified request whose check came in before the record did (the id says the
 * proxy stores one). Polling the database, not a signal within this process: the record may land
 * through another control-plane process.
 */
async function recordOnItsWay(reader: UsageReader, requestId: string): Promise<RequestRow | undefined> {
  for (const pause of ARRIVAL_PAUSES_MS) {
    await new Promise((resolve) => setTimeout(resolve, pause));
    const record = await reader.request(requestId);
    if (record) return record;
  }
  return undefined;
}

const challengedUsage = z.array(z.object({ meterSlug: z.string(), quantity: z.number().int().min(0) }));

/** What the payment covers, per meter: the usage it was challenged for (`usageJson`). */
function paidUsage(usageJson: string): Map<string, bigint> {
  const paid = new Map<string, bigint>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(usageJson);
  } catch {
    return paid;
  }
  const items = challengedUsage.safeParse(parsed);
  for (const item of items.success ? items.data : []) paid.set(item.meterSlug, (paid.get(item.meterSlug) ?? 0n) + BigInt(item.quantity));
  return paid;
}
