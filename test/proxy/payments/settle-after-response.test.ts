import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import t from 'tap';
import { privateKeyToAccount } from 'viem/accounts';
import type { Facilitator } from '../../../control-plane/facilitator/facilitator.js';
import { localRail } from '../../../control-plane/payments/rail.js';
import { finishPendingSettlements } from '../../../control-plane/payments/settlement/pending.js';
import { settlementsAfterResponse } from '../../../control-plane/payments/settlement/under-way.js';
import { chainReader, tokenBalance } from '../../helpers/chain.js';
import { testProviders } from '../../helpers/database.js';
import { startPaidWorld } from '../../helpers/paid-world.js';

// A seller may choose to answer paid calls before their settlement (`settlement: after_response`):
// the agent gets its answer marked `settling`, and the settlement follows.

/** Holds every settlement until the test lets it through (or forever, as a control-plane that died). */
function heldSettlements() {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let reached: () => void = () => {};
  const reachedFacilitator = new Promise<void>((resolve) => (reached = resolve));
  const wrap = (inner: Facilitator): Facilitator => ({
    verify: (p, r) => inner.verify(p, r),
    supported: () => inner.supported(),
    settle: async (p, r) => {
      reached();
      await released;
      return inner.settle(p, r);
    },
  });
  return { wrap, release, reachedFacilitator };
}

function payingFetch(payerKey: `0x${string}`) {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(payerKey) });
  client.setSpendControls({ allowedAssets: true });
  return wrapFetchWithPayment(fetch, client);
}

for (const provider of testProviders()) {
  t.test(`settling after the answer, on ${provider}`, async (t) => {
    const held = heldSettlements();
    const world = await startPaidWorld(t, provider, { wrapFacilitator: held.wrap });
    const { api, hub, chain, db, payTo, payerKey, sellerId, url } = world;
    const pay = payingFetch(payerKey);

    await t.test('the setting is the seller’s, through the management API', async (t) => {
      const read = await api.get(`/v1/sellers/${sellerId}`, hub.apiKey);
      t.equal(read.body.seller.settlement, 'before_response', 'the default waits for the chain');
      const bad = await api.patch(`/v1/sellers/${sellerId}`, hub.apiKey, { settlement: 'whenever' });
      t.equal(bad.status, 400);
      t.match(bad.body.error, /^settlement: /, 'the validation message names the field');
      const changed = await api.patch(`/v1/sellers/${sellerId}`, hub.apiKey, { settlement: 'after_response' });
      t.equal(changed.status, 200);
      t.equal(changed.body.seller.settlement, 'after_response');
    });

    await t.test('the answer goes out settling while the settlement is held; the settlement follows, once', async (t) => {
      const before = await tokenBalance(chain, payTo);
      const res = await pay(url('/search?q=after'));
      t.equal(res.status, 200, 'answered, though the settlement has not even reached the chain');
      t.same(JSON.parse(res.headers.get('hub-billing') ?? '{}'), {
        status: 'settling',
        remainderHandling: 'credited',
        settleTransactionHash: null,
      });
      t.equal(res.headers.get('payment-response'), null, 'no receipt for a transaction that does not exist yet');
      t.equal(res.headers.get('hub-usage-error'), null);
      await res.text();
      await held.reachedFacilitator;
      const attempt = await db.paymentAttempt.findFirstOrThrow({ where: { pathAndQuery: '/search?q=after' } });
      t.equal(attempt.status, 'settling');
      t.equal(await tokenBalance(chain, payTo), before, 'nothing moved yet');

      held.release();
      await settlementsAfterResponse();
      const settled = await db.paymentAttempt.findUniqueOrThrow({ where: { id: attempt.id } });
      t.equal(settled.status, 'settled');
      const receipt = await chainReader(chain).getTransactionReceipt({ hash: settled.settleTxHash as `0x${string}` });
      t.equal(receipt.status, 'success');
      t.equal(await tokenBalance(chain, payTo), before + 10_000n, 'paid once');
      const analytics = await api.get(`/v1/analytics/sellers/${sellerId}?days=1`, hub.apiKey);
      t.match(
        analytics.body.analytics.recentTransactions.find((tx: { id: string }) => tx.id === attempt.id),
        { kind: 'call', status: 'settled', paymentMethod: 'x402_wallet', amountUsd: '0.010000' },
        'the seller sees it settled',
      );
      t.equal(await finishPendingSettlements(db, { live: world.rail }, 0), 0, 'nothing left to finish');
      t.equal(await tokenBalance(chain, payTo), before + 10_000n, 'never charged twice');
    });

    await t.test('back to before_response: the answer waits for the chain again', async (t) => {
      await api.patch(`/v1/sellers/${sellerId}`, hub.apiKey, { settlement: 'before_response' });
      const res = await pay(url('/search?q=before'));
      t.equal(res.status, 200);
      const billing = JSON.parse(res.headers.get('hub-billing') ?? '{}');
      t.match(billing, { status: 'settled', chargedUsd: '0.010000', settleTransactionHash: /^0x[0-9a-f]{64}$/ });
      t.ok(res.headers.get('payment-response'), 'with its receipt');
    });
  });
}

t.test('a control-plane that stops after answering and before settling: its successor settles, once', async (t) => {
  const held = heldSettlements();
  const world = await startPaidWorld(t, 'sqlite', { wrapFacilitator: held.wrap });
  const { api, hub, chain, db, payTo, payerKey, sellerId, url } = world;
  await api.patch(`/v1/sellers/${sellerId}`, hub.apiKey, { settlement: 'after_response' });
  const before = await tokenBalance(chain, payTo);

  const res = await payingFetch(payerKey)(url('/search?q=stopped'));
  t.equal(res.status, 200);
  t.equal(JSON.parse(res.headers.get('hub-billing') ?? '{}').status, 'settling');
  await held.reachedFacilitator; // and never released: this control-plane is gone
  const attempt = await db.paymentAttempt.findFirstOrThrow({ where: { pathAndQuery: '/search?q=stopped' } });
  t.equal(attempt.status, 'settling', 'the database knows the settlement is owed');

  const successor = localRail(chain);
  t.teardown(() => (successor.facilitator as { close?: () => Promise<void> }).close?.());
  t.equal(await finishPendingSettlements(db, { live: successor }, 0), 1, 'found and settled');
  const settled = await db.paymentAttempt.findUniqueOrThrow({ where: { id: attempt.id } });
  t.equal(settled.status, 'settled');
  t.equal(await tokenBalance(chain, payTo), before + 10_000n, 'paid once');
  t.equal(await finishPendingSettlements(db, { live: successor }, 0), 0);

  // Were the first settlement only slow, not dead, its late outcome cannot undo the record.
  held.release();
  await settlementsAfterResponse();
  t.equal((await db.paymentAttempt.findUniqueOrThrow({ where: { id: attempt.id } })).status, 'settled', 'still settled');
  t.equal(await tokenBalance(chain, payTo), before + 10_000n, 'still paid once');
});

t.test('a settlement that fails after the answer is recorded failed; the answer was already delivered', async (t) => {
  const failing = (inner: Facilitator): Facilitator => ({
    verify: (p, r) => inner.verify(p, r),
    supported: () => inner.supported(),
    settle: async (_p, r) => ({ status: 'failed', reason: 'insufficient_funds', network: r.network, message: 'injected' }),
  });
  const world = await startPaidWorld(t, 'sqlite', { wrapFacilitator: failing });
  const { api, hub, db, payerKey, sellerId, url } = world;
  await api.patch(`/v1/sellers/${sellerId}`, hub.apiKey, { settlement: 'after_response' });
  const res = await payingFetch(payerKey)(url('/search?q=unpaid'));
  t.equal(res.status, 200, 'the seller’s answer was delivered: the risk the seller took');
  t.equal(JSON.parse(res.headers.get('hub-billing') ?? '{}').status, 'settling');
  await settlementsAfterResponse();
  const attempt = await db.paymentAttempt.findFirstOrThrow({ where: { pathAndQuery: '/search?q=unpaid' } });
  t.match(attempt, { status: 'failed', settlementReason: 'insufficient_funds', chargedMicros: 0n });
  const analytics = await api.get(`/v1/analytics/sellers/${sellerId}?days=1`, hub.apiKey);
  t.match(
    analytics.body.analytics.recentTransactions.find((tx: { id: string }) => tx.id === attempt.id),
    { status: 'failed' },
    'the seller sees the payment it did not get',
  );
});
