import { formatUsd } from '../../shared/money.js';

/**
 * The account write a stateful seller receives (spec: Account (stateful seller) write body): the
 * whole account as it stands at one `stateVersion`, never a change. The outbox keeps the snapshot;
 * it is rendered in the variant the seller takes when it is sent.
 */
export type AccountSnapshot = {
  accessId: string;
  agentId: string;
  buyerId: string | null;
  /** The verified email, where the plan's `verifiedEmailPolicy` lets the seller have it. */
  buyerEmail: string | null;
  stateVersion: number;
  plan: { slug: string; name: string; billingMode: string; interval: string; basePriceMicros: bigint };
  period: { start: Date; end: Date | null };
  creditGrantedMicros: bigint | null;
  creditReversedMicros: bigint;
  /** A canceled account is sent as `active` with its period ended at the cancellation. */
  status: 'active' | 'suspended';
};

export type WriteVariant = 'original' | 'later';

export function accountWriteBody(snapshot: AccountSnapshot, variant: WriteVariant): Record<string, unknown> {
  const plan = {
    slug: snapshot.plan.slug,
    name: snapshot.plan.name,
    billingMode: snapshot.plan.billingMode,
    interval: snapshot.plan.interval,
    basePriceUsd: formatUsd(snapshot.plan.basePriceMicros),
  };
  const period = { start: snapshot.period.start.toISOString(), end: snapshot.period.end?.toISOString() ?? null };
  const granted = snapshot.creditGrantedMicros === null ? null : formatUsd(snapshot.creditGrantedMicros);
  const common = {
    accessId: snapshot.accessId,
    idempotencyKey: `${snapshot.accessId}:${snapshot.stateVersion}`,
    stateVersion: snapshot.stateVersion,
    plan,
  };
  if (variant === 'original') {
    return {
      ...common,
      agent: snapshot.agentId,
      // The original variant declares no buyer fields; the email a plan's policy lets the seller
      // have rides as one more field, present only when there is one (docs/decisions.md#D-214).
      ...(snapshot.buyerEmail === null ? {} : { buyerEmail: snapshot.buyerEmail }),
      state: { period, creditGrantedUsd: granted, creditReversedUsd: formatUsd(snapshot.creditReversedMicros), status: snapshot.status },
    };
  }
  return {
    ...common,
    agentId: snapshot.agentId,
    buyerId: snapshot.buyerId,
    buyerEmail: snapshot.buyerEmail,
    state: {
      period,
      lifetimeCreditGrantedUsd: granted,
      lifetimeCreditReversedUsd: formatUsd(snapshot.creditReversedMicros),
      status: snapshot.status,
    },
  };
}

/** The outbox keeps snapshots as JSON: money as integer strings, times as ISO strings. */
export function serializeSnapshot(snapshot: AccountSnapshot): string {
  return JSON.stringify(snapshot, (_key, value) => (typeof value === 'bigint' ? value.toString() : value));
}

/** A snapshot as JSON keeps it: bigints as integer strings, times as ISO strings. */
type StoredSnapshot = Omit<AccountSnapshot, 'plan' | 'period' | 'creditGrantedMicros' | 'creditReversedMicros'> & {
  plan: Omit<AccountSnapshot['plan'], 'basePriceMicros'> & { basePriceMicros: string };
  period: { start: string; end: string | null };
  creditGrantedMicros: string | null;
  creditReversedMicros: string;
};

export function parseSnapshot(json: string): AccountSnapshot {
  const raw = JSON.parse(json) as StoredSnapshot;
  return {
    ...raw,
    plan: { ...raw.plan, basePriceMicros: BigInt(raw.plan.basePriceMicros) },
    period: { start: new Date(raw.period.start), end: raw.period.end === null ? null : new Date(raw.period.end) },
    creditGrantedMicros: raw.creditGrantedMicros === null ? null : BigInt(raw.creditGrantedMicros),
    creditReversedMicros: BigInt(raw.creditReversedMicros),
  };
}
