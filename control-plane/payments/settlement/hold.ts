import type { Logger } from 'pino';
import { paymentPayloadSchema } from '../../../shared/payments/x402-wire.js';
import type { Db } from '../../db/client.js';
import { sqlOf } from '../../db/sql.js';
import type { SettleResult } from '../../facilitator/results.js';
import { moveAttempt, noteAttempt } from '../attempt-status.js';
import type { PaymentRail } from '../rail.js';
import { networksOf, type PaymentRails, railOf } from '../rails.js';
import { attemptRequirements } from '../requirements.js';
import { attemptsInTurn } from './in-turn.js';
import { type Unsettleable, unsettleable } from './record.js';
import { answeredWithin, submittingOn, whileSubmitting } from './under-way.js';

/**
 * A stateful seller's purchase is money held (docs/decisions.md › Held purchases): its challenge
 * names the rail's escrow as `payTo`, and the paid retry moves the payment there at once
 * (`holding`, then `reserved`), before the account exists. The seller having the account pays it
 * out whole (settle with the escrow's payout, record.ts); an account write that fails for good
 * returns it to the payer (`releasing`, then `released`), both on chain, whenever that is: the
 * escrow pays a deposit out once, and its payout needs no authorization that could lapse.
 */
export type Holdable = {
  id: string;
  amountMicros: bigint;
  payTo: string | null;
  /** The seller's wallet the escrow pays out to. */
  payoutTo: string | null;
  paymentPayloadJson: string | null;
  network: string | null;
};

/** Failures after which an earlier submission of the same hold cannot have moved the money. */
const PROVES_NOTHING_MOVED: ReadonlySet<string> = new Set(['invalid_signature', 'invalid_payload', 'wrong_payee', 'amount_mismatch']);

/**
 * Moves an attempt marked `holding` into the escrow and records how that ended: `reserved` with
 * the transaction (`reserved: true` when this call recorded it), `failed` with nothing charged, or
 * still `holding` (the outcome is not known yet; the pending loop tries again, which is safe).
 */
export async function holdAndRecord(
  db: Db,
  rail: PaymentRail | undefined,
  attempt: Holdable,
  options: { again?: boolean } = {},
): Promise<HoldOutcome> {
  const result = await whileSubmitting(rail, attempt.id, () => submitHold(rail, attempt));
  const sql = sqlOf(db);
  if (result.status === 'failed') {
    // Tried again, only a failure that proves the first submission moved nothing ends the hold.
    if (options.again && !PROVES_NOTHING_MOVED.has(result.reason)) return result;
    await moveAttempt(sql, attempt.id, { to: 'failed', from: ['holding'], set: { settlementReason: result.reason, chargedMicros: 0n } });
    return result;
  }
  if (result.status !== 'settled') {
    await noteAttempt(sql, attempt.id, { while: 'holding', set: { holdTxHash: result.transaction } });
    return result;
  }
  const reserved = await moveAttempt(sql, attempt.id, {
    to: 'reserved',
    from: ['holding'],
    set: { holdTxHash: result.transaction ?? null },
  });
  return { ...result, reserved };
}

/** `holdAndRecord`, waited for as a settlement is (`answeredWithin`). */
export function holdInTime(db: Db, rail: PaymentRail | undefined, attempt: Holdable): Promise<HoldOutcome | undefined> {
  return answeredWithin(holdAndRecord(db, rail, attempt));
}

/**
 * Returns a held payment, marked `releasing`, to its payer and records it `released` with the
 * return's transaction. One whose outcome is not known yet stays `releasing`, and so does one the
 * chain refused: the money is in the escrow, so the return is tried again (and logged) until it
 * goes through.
 */
export async function returnAndRecord(db: Db, rail: PaymentRail | undefined, attempt: Holdable, logger?: Logger): Promise<Outcome> {
  const result = await whileSubmitting(rail, attempt.id, () => submitReturn(rail, attempt));
  const sql = sqlOf(db);
  if (result.status === 'settled') {
    await moveAttempt(sql, attempt.id, {
      to: 'released',
      from: ['releasing'],
      set: { refundTxHash: result.transaction ?? null, chargedMicros: 0n, settlementReason: null },
    });
    return result;
  }
  await noteAttempt(sql, attempt.id, { while: 'releasing', set: { refundTxHash: result.transaction } });
  if (result.status === 'failed') {
    logger?.warn({ paymentId: attempt.id, reason: result.reason }, 'returning a held payment to its payer failed; it is tried again');
  }
  return result;
}

/**
 * Finishes holds and returns left unfinished (a timeout, a crash), each on the rail it was made on:
 * both are safe to submit again. Not one this process is still submitting, nor one made on a rail
 * this hub no longer has (it waits for that rail). A page a pass, in turn (in-turn.ts).
 */
export async function finishPendingHolds(db: Db, rails: PaymentRails, olderThanMs = 10_000, logger?: Logger): Promise<number> {
  const before = new Date(Date.now() - olderThanMs);
  const pending = await attemptsInTurn(db, 'holds', {
    status: { in: ['holding', 'releasing'] },
    network: { in: networksOf(rails) },
    verifiedAt: { lt: before },
  });
  let finished = 0;
  for (const attempt of pending) {
    const rail = railOf(rails, attempt);
    if (!rail || submittingOn(rail).has(attempt.id)) continue;
    // One that throws does not hold up the rest.
    const result = await (attempt.status === 'holding'
      ? holdAndRecord(db, rail, attempt, { again: true })
      : returnAndRecord(db, rail, attempt, logger)
    ).catch(() => undefined);
    if (result?.status === 'settled') finished++;
  }
  return finished;
}

type Outcome = SettleResult | Unsettleable;
/** `reserved`: this call recorded the payment held. */
type HoldOutcome = Outcome & { reserved?: boolean };

/** What a held payment is submitted with: the payer's payment and its terms, the escrow its `payTo`. */
function heldPayment(rail: PaymentRail | undefined, attempt: Holdable) {
  if (!rail?.escrow || !attempt.payTo || !attempt.payoutTo || !attempt.paymentPayloadJson) return undefined;
  const payload = paymentPayloadSchema.parse(JSON.parse(attempt.paymentPayloadJson));
  return { rail, escrow: rail.escrow, payload, requirements: attemptRequirements(rail, { ...attempt, payTo: attempt.payTo }) };
}

/** The authorization to the escrow, submitted as any payment is. */
async function submitHold(rail: PaymentRail | undefined, attempt: Holdable): Promise<Outcome> {
  const held = heldPayment(rail, attempt);
  return held ? held.rail.facilitator.settle(held.payload, held.requirements) : unsettleable(rail, attempt);
}

/** The deposit paid out to no one: the escrow returns all of it to the payer. */
async function submitReturn(rail: PaymentRail | undefined, attempt: Holdable): Promise<Outcome> {
  const held = heldPayment(rail, attempt);
  if (!held) return unsettleable(rail, attempt);
  return held.escrow.settle(held.payload, held.requirements, { payee: attempt.payoutTo as `0x${string}`, charged: 0n, deposited: true });
}
