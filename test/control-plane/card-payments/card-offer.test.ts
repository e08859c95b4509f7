import t from 'tap';
import { cardOffer } from '../../../control-plane/card-payments/card-offer.js';
import type { CardPaymentsConfig } from '../../../shared/config.js';

// Which purchases a 402 offers by card (docs/decisions.md#D-245, D-302). The whole purchase by
// card, offered and paid at a real pay URL, is in card-purchases.test.ts.

const keys = (testMode: boolean): CardPaymentsConfig => ({
  secretKey: testMode ? 'sk_test_x' : 'sk_live_x',
  publishableKey: testMode ? 'pk_test_x' : 'pk_live_x',
  webhookSecrets: ['whsec_x'],
  timeoutMs: 10_000,
  maxNetworkRetries: 2,
  testMode,
});
const onboarded = { cardAccountId: 'acct_1', cardChargesEnabled: true, sandbox: false };
const FIVE_DOLLARS = 5_000_000n;

t.test('a live seller that finished onboarding is offered whole cents from the minimum', async (t) => {
  t.same(cardOffer(keys(false), onboarded, FIVE_DOLLARS), { amountCents: 500, networkId: 'acct_1' });
  t.same(cardOffer(keys(false), onboarded, 500_000n), { amountCents: 50, networkId: 'acct_1' }, 'exactly the minimum');
  t.equal(cardOffer(keys(false), onboarded, 490_000n), undefined, 'below the minimum');
  t.equal(cardOffer(keys(false), onboarded, 5_000_001n), undefined, 'not whole cents');
  t.equal(cardOffer(undefined, onboarded, FIVE_DOLLARS), undefined, 'no provider keys');
  t.equal(cardOffer(keys(false), { ...onboarded, cardChargesEnabled: false }, FIVE_DOLLARS), undefined, 'charges not enabled');
  t.equal(cardOffer(keys(false), { ...onboarded, cardAccountId: null }, FIVE_DOLLARS), undefined, 'no connected account');
});

t.test('a sandbox seller is offered cards on test-mode keys only', async (t) => {
  const sandbox = { ...onboarded, sandbox: true };
  t.equal(cardOffer(keys(false), sandbox, FIVE_DOLLARS), undefined, 'live keys would charge real cards for test traffic');
  t.same(cardOffer(keys(true), sandbox, FIVE_DOLLARS), { amountCents: 500, networkId: 'acct_1' });
  t.same(cardOffer(keys(true), onboarded, FIVE_DOLLARS), { amountCents: 500, networkId: 'acct_1' }, 'a live seller on test keys too');
});
