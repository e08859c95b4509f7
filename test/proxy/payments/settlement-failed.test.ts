import t from 'tap';
import { settleFailure } from '../../../control-plane/facilitator/results.js';
import { tokenBalance } from '../../helpers/chain.js';
import { testProviders } from '../../helpers/database.js';
import { settlingWith } from '../../helpers/local-facilitator.js';
import { startPaidWorld } from '../../helpers/paid-world.js';
import { x402Fetch } from '../../helpers/x402-agent.js';

// A settlement that fails after the seller delivered: the response still reaches the agent, says
// `hub-usage-error: settlement_failed`, claims no billing or receipt, and nothing is charged.

/** Verifies as the chain does, then refuses every settlement, as a reverted transfer would be. */
const failingSettle = settlingWith(async (_p, r) => settleFailure('transaction_reverted', { network: r.network }));

for (const provider of testProviders()) {
  t.test(`a failed settlement after delivery on ${provider}`, async (t) => {
    const { chain, db, payTo, payerKey, url } = await startPaidWorld(t, provider, { wrapFacilitator: failingSettle });
    const pay = x402Fetch(payerKey);
    const before = await tokenBalance(chain, payTo);

    const res = await pay(url('/search?q=fails'));
    t.equal(res.status, 200, 'the seller’s answer is delivered');
    t.match(await res.json(), { results: ['a', 'b'] });
    t.equal(res.headers.get('hub-usage-error'), 'settlement_failed');
    t.equal(res.headers.get('hub-billing'), null, 'no billing claimed');
    t.equal(res.headers.get('payment-response'), null, 'no receipt');
    t.equal(await tokenBalance(chain, payTo), before, 'nothing moved');
    const attempt = await db.paymentAttempt.findFirstOrThrow({ where: { pathAndQuery: '/search?q=fails' } });
    t.match(attempt, { status: 'failed', settlementReason: 'transaction_reverted', chargedMicros: 0n });
    t.equal(await db.creditEntry.count(), 0, 'nothing credited');

    // A garbled hub-usage too: the failed payment is what the agent must hear of.
    const garbled = await pay(url('/garbled?q=fails'));
    t.equal(garbled.status, 200);
    t.equal(garbled.headers.get('hub-usage-error'), 'settlement_failed', 'not invalid_usage_header');
  });
}
