import { microsToCents } from '../../shared/card-payments/cents.js';
import type { CardPaymentsConfig } from '../../shared/config.js';
import type { IssuedChallenge } from '../../shared/contract.js';
import { isWholeCents, MICROS_PER_CENT } from '../../shared/money.js';
import { MINIMUM_CARD_CENTS } from '../../shared/payments/mpp/stripe-charge.js';

/**
 * Whether a purchase's 402 also offers the price by card (docs/decisions.md#D-245): only on a hub
 * with the provider's keys, for a seller whose connected account the provider lets take charges,
 * for a whole number of cents of at least the provider's minimum. Per-call challenges never do.
 * A sandbox seller is offered cards only on the provider's test-mode keys: live keys would charge
 * real cards for test traffic (docs/decisions.md#D-302).
 */
export function cardOffer(
  cards: CardPaymentsConfig | undefined,
  seller: { cardAccountId: string | null; cardChargesEnabled: boolean; sandbox: boolean },
  amountMicros: bigint,
): IssuedChallenge['card'] {
  if (!cards || !seller.cardAccountId || !seller.cardChargesEnabled) return undefined;
  if (seller.sandbox && !cards.testMode) return undefined;
  if (!isWholeCents(amountMicros) || amountMicros < BigInt(MINIMUM_CARD_CENTS) * MICROS_PER_CENT) return undefined;
  // The wallet grants the token to the seller's connected account, which is who charges it.
  return { amountCents: microsToCents(amountMicros), networkId: seller.cardAccountId };
}
