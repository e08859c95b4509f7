import t from 'tap';
import { finishPendingHolds } from '../../../control-plane/payments/settlement/hold.js';
import { finishPendingSettlements } from '../../../control-plane/payments/settlement/pending.js';
import { finishPurchases } from '../../../control-plane/storefront/purchase.js';
import type { PaymentRequirements } from '../../../shared/payments/x402-wire.js';
import { registerAgent } from '../../helpers/agents.js';
import { tokenBalance } from '../../helpers/chain.js';
import { testProviders } from '../../helpers/database.js';
import { startPaidWorld } from '../../helpers/paid-world.js';
import { admitPaidRetry } from '../../helpers/sign-payment.js';

// A purchase whose buyer stopped waiting is finished by the settlement loop: a proxy that died
// after the payment was admitted (the attempt left in flight) and a settlement whose outcome came
// late both end with the payment settled once and the account opened once.

for (const provider of testProviders()) {
  t.test(`purchases finished after the buyer left, on ${provider}`, async (t) => {
    const { hub, chain, db, api, payTo, payerKey, url, sellerId, rail, offerPlan } = await startPaidWorld(t, provider);
    const plan = { id: await offerPlan({ name: 'Monthly', slug: 'monthly', billingMode: 'subscription', basePriceUsd: '3.00' }) };
    const agent = await registerAgent(hub, 'acme');
    /** A purchase paid and admitted, as a proxy does just before it dies. */
    const admittedPurchase = async (planId = plan.id) => {
      const body = JSON.stringify({ planId });
      const res = await fetch(url('/extend'), {
        method: 'POST',
        headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
        body,
      });
      const requirements = ((await res.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
      return admitPaidRetry(db, rail, chain, payerKey, requirements, { sellerId, method: 'POST', pathAndQuery: '/extend', body });
    };

    await t.test('a seller that is not stateful: settled by the loop, then the account opened', async (t) => {
      const paymentId = await admittedPurchase();
      const before = await tokenBalance(chain, payTo);
      t.equal(await finishPurchases(db), 0, 'nothing is touched while the retry may still be finishing');
      t.equal(await finishPurchases(db, Date.now() + 61_000), 1, 'in flight for a minute: handed to the settlement loop');
      t.equal(await finishPendingSettlements(db, { live: rail }, 0), 1);
      t.equal(await tokenBalance(chain, payTo), before + 3_000_000n, 'settled once');
      t.equal(await finishPurchases(db, Date.now() + 11_000), 1, 'settled: the account opens');
      t.equal(await finishPurchases(db, Date.now() + 11_000), 0, 'and only once');
      const attempt = await db.paymentAttempt.findUniqueOrThrow({ where: { id: paymentId } });
      t.match(attempt, { status: 'settled', accessId: /^hubacc_/ });
      const receipt = await fetch(url('/purchases/receipt'), { headers: { authorization: `Bearer ${agent.token}` } });
      t.match(await receipt.json(), { purchases: [{ accessId: attempt.accessId, status: 'active', plan: { slug: 'monthly' } }] });
    });

    await t.test(
      'a plan a purchase is still open for cannot be deleted; one the loop cannot finish does not hold up the others',
      async (t) => {
        const gone = await offerPlan({ name: 'Gone', slug: 'gone', billingMode: 'subscription', basePriceUsd: '1.00' });
        const asked = await fetch(url('/extend'), {
          method: 'POST',
          headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ planId: gone }),
        });
        t.equal(asked.status, 402);
        t.match(await api.delete(`/v1/plans/${gone}`, hub.apiKey), {
          status: 409,
          body: { error: 'resource_in_use', reason: /still being paid/ },
        });
        const lost = await admittedPurchase(gone);
        const kept = await admittedPurchase();
        t.match(await api.delete(`/v1/plans/${gone}`, hub.apiKey), { status: 409 }, 'nor once paid');
        // A fault injected where the API would refuse: the plan gone from under a paid purchase.
        await db.plan.delete({ where: { id: gone } });
        t.equal(await finishPurchases(db, Date.now() + 61_000), 2);
        t.equal(await finishPendingSettlements(db, { live: rail }, 0), 2);
        t.equal(await finishPurchases(db, Date.now() + 11_000), 1, 'the other account opens');
        t.match(await db.paymentAttempt.findUniqueOrThrow({ where: { id: kept } }), { accessId: /^hubacc_/ });
        t.match(await db.paymentAttempt.findUniqueOrThrow({ where: { id: lost } }), { status: 'settled', accessId: null });
      },
    );

    await t.test('a stateful seller: held in the escrow by the loop, then the account opened with its write', async (t) => {
      await api.put(`/v1/sellers/${sellerId}/stateful-access`, hub.apiKey, { stateful: true });
      const paymentId = await admittedPurchase();
      const escrow = await tokenBalance(chain, chain.escrow!);
      t.equal(await finishPurchases(db, Date.now() + 61_000), 1, 'in flight for a minute: handed to the loop that holds it');
      t.match(await db.paymentAttempt.findUniqueOrThrow({ where: { id: paymentId } }), { status: 'holding', accessId: null });
      t.equal(await finishPendingHolds(db, { live: rail }, 0), 1);
      t.equal(await tokenBalance(chain, chain.escrow!), escrow + 3_000_000n, 'held once');
      t.equal(await finishPurchases(db, Date.now() + 11_000), 1, 'held: the account opens');
      t.equal(await finishPurchases(db, Date.now() + 11_000), 0, 'and only once');
      const attempt = await db.paymentAttempt.findUniqueOrThrow({ where: { id: paymentId } });
      t.match(attempt, { status: 'reserved', accessId: /^hubacc_/, holdTxHash: /^0x[0-9a-f]{64}$/, settleTxHash: null });
      t.equal(await db.accountWrite.count({ where: { accessId: attempt.accessId! } }), 1);
    });
  });
}
