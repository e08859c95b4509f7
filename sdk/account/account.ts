/**
 * A seller's local picture of one buyer account, as the newest account write described it, plus
 * what the seller itself keeps: the credit balance and the per-period usage counters.
 * Money is integer micro-USD (`bigint`); it becomes a decimal string only at the edges.
 */
export type BillingMode = 'subscription' | 'subscription_usage' | 'credit';
export type PlanInterval = 'none' | 'month' | 'year';
export type AccountStatus = 'active' | 'suspended';

export type AccountPlan = { slug: string; name: string; billingMode: BillingMode; interval: PlanInterval; basePriceMicros: bigint };

export type Account = {
  accessId: string;
  /** The customer the account belongs to (the newest write's agent). */
  agentId: string;
  buyerId: string | null;
  buyerEmail: string | null;
  /** The newest write applied; equal or lower versions are replays. */
  stateVersion: number;
  plan: AccountPlan;
  status: AccountStatus;
  /** ISO timestamps; `end` is null for plans with no expiry. */
  period: { start: string; end: string | null };
  /** Whether the newest write had a credit component (a non-null grant total). */
  hasCredit: boolean;
  /** Grant and reversal totals as last netted into the balance; they only rise and are never reset. */
  creditGrantedMicros: bigint;
  creditReversedMicros: bigint;
  /** Credit left to spend; never negative. */
  balanceMicros: bigint;
  /** The seller's own per-period counters (meter → units), reset when a new period starts. */
  periodUsage: Record<string, number>;
  updatedAt: string;
};

/**
 * The spec's serviceability rule: serve only while the stored status is `active` and, when the
 * period has an end, that end has not passed. Period expiry is never pushed; it is checked here.
 */
export function isServiceable(account: Account, at: Date = new Date()): boolean {
  if (account.status !== 'active') return false;
  return account.period.end === null || at.getTime() < Date.parse(account.period.end);
}

/** Spends credit if the balance covers it; the balance never goes below zero. */
export function spendCredit(account: Account, micros: bigint): { ok: true; account: Account } | { ok: false; account: Account } {
  if (micros < 0n) throw new RangeError('spendCredit takes a non-negative amount');
  if (account.balanceMicros < micros) return { ok: false, account };
  return { ok: true, account: { ...account, balanceMicros: account.balanceMicros - micros } };
}

/** Adds units to this period's counter for a meter. */
export function countPeriodUsage(account: Account, meter: string, units: number): Account {
  if (!Number.isSafeInteger(units) || units < 0) throw new RangeError('units must be a non-negative integer');
  const used = (Object.hasOwn(account.periodUsage, meter) ? account.periodUsage[meter]! : 0) + units;
  return { ...account, periodUsage: { ...account.periodUsage, [meter]: used } };
}
