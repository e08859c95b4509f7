import { getAddress } from 'viem';
import { BATCH_SETTLEMENT_SCHEME } from '../../shared/payments/batch-settlement.js';
import type { PaymentRequirements } from '../../shared/payments/x402-wire.js';
import type { PaymentRail } from '../payments/rail.js';
import { attemptRequirements } from '../payments/requirements.js';
import type { SessionRail } from './session-rail.js';

/**
 * The batch-settlement requirements of a payment attempt, offered beside its `exact` ones for the
 * same price (docs/decisions.md#D-281): the same amount, token and attempt id, paid into a channel
 * whose receiver is the seller's wallet, with the channel terms the scheme puts in `extra` (hub's
 * receiver authorizer and withdrawal delay). Built the same way for the 402 and for verification.
 */
export function sessionRequirements(
  rail: PaymentRail & { sessions: SessionRail },
  attempt: { id: string; amountMicros: bigint; receiver: string },
): PaymentRequirements {
  const exact = attemptRequirements(rail, { id: attempt.id, amountMicros: attempt.amountMicros, payTo: attempt.receiver });
  return {
    ...exact,
    scheme: BATCH_SETTLEMENT_SCHEME,
    extra: { ...exact.extra, receiverAuthorizer: getAddress(rail.sessions.receiverAuthorizer), withdrawDelay: rail.sessions.withdrawDelay },
  };
}

/** The rail, when it takes sessions. */
export function sessionsOn(rail: PaymentRail | undefined): (PaymentRail & { sessions: SessionRail }) | undefined {
  return rail?.sessions ? (rail as PaymentRail & { sessions: SessionRail }) : undefined;
}

/** The rail, when it takes sessions and offers them now (`SessionRail.offered`). */
export async function sessionsOffered(rail: PaymentRail | undefined): Promise<(PaymentRail & { sessions: SessionRail }) | undefined> {
  const sessions = sessionsOn(rail);
  return sessions && (await (sessions.sessions.offered?.() ?? true)) ? sessions : undefined;
}
