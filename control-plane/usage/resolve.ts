import { z } from 'zod';
import { isId, isRecordedRequestId } from '../../shared/ids.js';
import { type AttemptStatus, TAKES_REPORTS } from '../payments/attempt-status.js';
import { type UsageCatalog, usageCatalog } from './catalog.js';
import { type Denied, denied } from './denials.js';
import type { AccessRow, Lookup, ServiceRow, UsageReader } from './reader.js';

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

export type Backing =
  | { kind: 'payment'; paymentAttemptId: string; planId: string; paid: Map<string, bigint> }
  | { kind: 'free'; buyerId: string; plan: { id: string; interval: string } }
  | { kind: 'access'; accesses: AccessRow[] };

export type Resolved = {
  ok: true;
  service: ServiceRow;
  requestId: string;
  backing: Backing;
  /** The service's seller's catalog, read once per call. */
  catalog: () => Promise<UsageCatalog>;
};

/**
 * The lookup of a call (reader.ts). A claimed payment is found by the payment statuses in
 * `CLAIMED_STATUSES` (payments/attempt-status.ts): once paid for, a request is the payment's alone, and after
 * settlement (or release) nothing stands behind it, so a late report never falls through to the
 * agent's plan, which would charge a call already paid.
 */
export function lookupRequest(
  reader: UsageReader,
  organizationId: string,
  requestId: string,
  serviceSlug: string,
  idempotencyKey: string | null = null,
): Promise<Lookup> {
  return reader.lookup(organizationId, serviceSlug, isId('request', requestId) ? requestId : null, idempotencyKey);
}

export async function resolveRequest(
  reader: UsageReader,
  organizationId: string,
  requestId: string,
  serviceSlug: string,
  purpose: Purpose,
  looked?: Lookup,
): Promise<Resolved | Denied> {
  let found = looked ?? (await lookupRequest(reader, organizationId, requestId, serviceSlug));
  if (found.services.length === 0) return denied('service_not_found');
  if (!found.request && !found.payment && isRecordedRequestId(requestId)) {
    found = (await recordOnItsWay(reader, organizationId, requestId, serviceSlug)) ?? found;
  }
  const { services, payment, request: record } = found;
  const resolved = (service: ServiceRow, backing: Backing, catalog = catalogOnce(reader, service)): Resolved => ({
    ok: true,
    service,
    requestId,
    backing,
    catalog,
  });

  if (payment) {
    if (!LIVE_PAYMENT_STATUSES[purpose].includes(payment.status as AttemptStatus)) return denied('access_not_found', PAYMENT_CLOSED);
    const service = services.find((s) => s.id === payment.serviceId);
    if (!service || !payment.planId) return denied('access_not_found');
    return resolved(service, { kind: 'payment', paymentAttemptId: payment.id, planId: payment.planId, paid: paidUsage(payment.usageJson) });
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
    const catalog = catalogOnce(reader, service);
    const plan = (await catalog()).paygPlans.get(service.id);
    if (!plan) return denied('access_not_found');
    return resolved(service, { kind: 'free', buyerId: owner, plan }, catalog);
  }

  // The agent's own accesses first, then its owner's (shared by the owner's agents), each group
  // oldest first: the order a report draws from them in. The lookup found those of the agent's
  // buyer, on every service of that name: the owner and the service are decided here.
  const rows = found.accesses.filter(
    (row) =>
      row.serviceId === service.id &&
      row.sellerId === service.sellerId &&
      (row.agentId === agentId || (owner !== null && row.buyerId === owner)),
  );
  const accesses: AccessRow[] = [...rows.filter((row) => row.agentId === agentId), ...rows.filter((row) => row.agentId !== agentId)].map(
    ({ buyerId: _buyer, sellerId: _seller, serviceId: _service, ...access }) => access,
  );
  if (accesses.length === 0) return denied('access_not_found');
  return resolved(service, { kind: 'access', accesses });
}

/** The service's catalog, read at most once by whoever asks first. */
function catalogOnce(reader: UsageReader, service: ServiceRow): () => Promise<UsageCatalog> {
  let catalog: Promise<UsageCatalog> | undefined;
  return () => {
    catalog ??= usageCatalog(reader, service);
    return catalog;
  };
}

/**
 * Pauses between looks for a record the proxy is still storing, ~2 s in all. The proxy sends it as
 * it forwards the request, so it is normally there before the seller asks, or within milliseconds.
 */
const ARRIVAL_PAUSES_MS = [5, 10, 20, 40, 80, 160, 320, 640, 725];

/**
 * The lookup once the record of an identified request is there, when the check came in before the
 * record did (the id says the proxy stores one). Polling the database, not a signal within this
 * process: the record may land through another control-plane process.
 */
async function recordOnItsWay(
  reader: UsageReader,
  organizationId: string,
  requestId: string,
  serviceSlug: string,
): Promise<Lookup | undefined> {
  for (const pause of ARRIVAL_PAUSES_MS) {
    await new Promise((resolve) => setTimeout(resolve, pause));
    const found = await lookupRequest(reader, organizationId, requestId, serviceSlug);
    if (found.request) return found;
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
