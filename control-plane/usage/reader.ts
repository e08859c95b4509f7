import type { PriceTerms } from './pricing.js';

/**
 * Everything the usage endpoints read, behind one interface with two implementations:
 *
 * * on a SQLite file, prepared statements on a read-only connection of its own (a lookup costs
 *   ~10 µs there, against ~300 µs through the ORM, which makes the allowance check fast enough
 *   to sit in front of every call); it sees committed data only, and being read-only it never
 *   competes with the ORM's connection for the write lock;
 * * otherwise (PostgreSQL, in-memory SQLite), the ORM.
 *
 * readers/choose-reader.ts picks one per database.
 *
 * Writes always go through the ORM's connection (draw.ts).
 */
export interface UsageReader {
  /** Services of the organization with this slug (one per seller at most). */
  servicesNamed(organizationId: string, slug: string): Promise<ServiceRow[]>;
  /** The newest per-call payment of the request in one of `statuses`. */
  callPayment(organizationId: string, requestId: string, statuses: readonly string[]): Promise<PaymentRow | undefined>;
  /** The request as the proxy recorded it, with its agent and the agent's owner. */
  request(requestId: string): Promise<RequestRow | undefined>;
  /** The service's pay-as-you-go plan (the oldest, when there are several). */
  paygPlan(serviceId: string): Promise<{ id: string; interval: string } | undefined>;
  /** Accesses to the service held by the agent or by `ownerId`, oldest first. */
  accesses(service: ServiceRow, agentId: string, ownerId: string | null): Promise<AccessRow[]>;
  /** Meter ids by key, on the service. */
  meters(serviceId: string, keys: readonly string[]): Promise<Map<string, string>>;
  /** Prices of the plans for the meters. */
  prices(planIds: readonly string[], meterIds: readonly string[]): Promise<PriceRow[]>;
  /** Included units drawn from accesses, for their periods. */
  accessUsage(accessIds: readonly string[], meterIds: readonly string[], periodStarts: readonly Date[]): Promise<AccessUsageRow[]>;
  /** Included units drawn from a buyer's free pool in one period. */
  freePoolUsage(buyerId: string, periodStart: Date, meterIds: readonly string[]): Promise<{ meterId: string; unitsUsed: bigint }[]>;
  /** The usage event recorded under an idempotency key. */
  usageEvent(organizationId: string, idempotencyKey: string): Promise<{ id: string; bodyDigest: string; costMicros: bigint } | undefined>;
}

export type ServiceRow = { id: string; sellerId: string };
export type PaymentRow = { id: string; status: string; serviceId: string | null; planId: string | null; usageJson: string };
export type RequestRow = {
  sellerId: string;
  serviceId: string | null;
  agentId: string | null;
  buyerId: string | null;
  mode: string;
  /** Null when the request has no agent (or the agent is gone). */
  agent: { buyerId: string | null; claimed: boolean; ownerEmailVerified: boolean } | null;
};
export type AccessRow = {
  id: string;
  agentId: string;
  planId: string;
  status: string;
  periodStart: Date | null;
  periodEnd: Date | null;
  creditGrantedMicros: bigint | null;
  balanceMicros: bigint;
};
export type PriceRow = PriceTerms & { planId: string; meterId: string; defaultMaxQuantity: bigint | null };
export type AccessUsageRow = { accessId: string; meterId: string; periodStart: Date; unitsUsed: bigint };
