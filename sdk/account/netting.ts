import type { Account } from './account.js';
import type { AccountWrite } from './write-body.js';

/**
 * Applying an account write (spec: Account write handling rules). A write describes how the
 * account should look, not what changed, so credit movement is derived by netting the write's
 * grant and reversal totals against the recorded ones:
 *
 * - `replay`: the version, or a newer one, is already applied; nothing changes.
 * - `no_credit_dimension`: the plan has no credit component; the balance is left alone.
 * - `credit`: the net total rose (or stayed); the delta is added to the balance.
 * - `debit`: a refund or chargeback pulled money back; the delta is subtracted, clamped at zero.
 *
 * Everything is integer micro-USD. Pure: the stores run it inside their per-account atomic update.
 */
export type WriteOutcome = 'credit' | 'debit' | 'no_credit_dimension' | 'replay';

export type AppliedWrite = { outcome: WriteOutcome; account: Account; periodRenewed: boolean };

export function applyAccountWrite(current: Account | undefined, write: AccountWrite, at: Date = new Date()): AppliedWrite {
  if (current !== undefined && write.stateVersion <= current.stateVersion) {
    return { outcome: 'replay', account: current, periodRenewed: false };
  }

  const recordedGranted = current?.creditGrantedMicros ?? 0n;
  const recordedReversed = current?.creditReversedMicros ?? 0n;
  const balance = current?.balanceMicros ?? 0n;

  let outcome: WriteOutcome;
  let next: Pick<Account, 'creditGrantedMicros' | 'creditReversedMicros' | 'balanceMicros' | 'hasCredit'>;
  if (write.creditGrantedMicros === null) {
    // A null grant says "no credit component", not "nothing was ever granted": keeping the recorded
    // grant means a plan that regains a credit component nets against what was already counted.
    outcome = 'no_credit_dimension';
    next = {
      hasCredit: false,
      creditGrantedMicros: recordedGranted,
      creditReversedMicros: write.creditReversedMicros,
      balanceMicros: balance,
    };
  } else {
    const delta = write.creditGrantedMicros - write.creditReversedMicros - (recordedGranted - recordedReversed);
    const raw = balance + delta;
    outcome = delta >= 0n ? 'credit' : 'debit';
    next = {
      hasCredit: true,
      creditGrantedMicros: write.creditGrantedMicros,
      creditReversedMicros: write.creditReversedMicros,
      balanceMicros: raw < 0n ? 0n : raw,
    };
  }

  // A renewal is an ordinary write whose period starts elsewhere: only per-period counters reset.
  const periodRenewed = current !== undefined && current.period.start !== write.period.start;
  return {
    outcome,
    periodRenewed,
    account: {
      accessId: write.accessId,
      agentId: write.agentId,
      // The original variant declares no buyer fields, so they keep what an earlier write said,
      // unless hub added the email to it.
      buyerId: write.variant === 'later' ? write.buyerId : (current?.buyerId ?? null),
      buyerEmail: write.variant === 'later' || write.buyerEmail !== null ? write.buyerEmail : (current?.buyerEmail ?? null),
      stateVersion: write.stateVersion,
      plan: write.plan,
      status: write.status,
      period: write.period,
      ...next,
      periodUsage: current === undefined || periodRenewed ? {} : current.periodUsage,
      updatedAt: at.toISOString(),
    },
  };
}
