import pino from 'pino';
import t from 'tap';
import { createTestClient, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { AccountWriteWorker } from '../../../control-plane/delivery/account-write-worker.js';
import { finishPendingPayments } from '../../../control-plane/storefront/pending-payments.js';
import type { PaymentRequirements } from '../../../shared/payments/x402-wire.js';
import { FAST_DELIVERY, startAccountReceiver } from '../../helpers/account-receiver.js';
import { registerAgent } from '../../helpers/agents.js';
import { tokenBalance } from '../../helpers/chain.js';
import { testProviders } from '../../helpers/database.js';
import { settlingWith } from '../../helpers/local-facilitator.js';
import { startPaidWorld } from '../../helpers/paid-world.js';
import { until } from '../../helpers/row-locks.js';
import { signPayment } from '../../helpers/sign-payment.js';

// A stateful seller's purchase is money held: the payment moves into the escrow when the agent
// pays, the seller is paid out of it once it has the account (however long it provisioned), and
// the payer gets it back on chain when the account write fails for good. Calls on the account
// are refused until the seller has it. All through the pay URL with signed x402 payments, the
// SDK's account endpoint as the seller, and anvil.

type Json = Record<string, any>;
const silent = pino({ level: 'silent' });

for (const provider of testProviders()) {
  t.test(`held purchases on ${provider}`, async (t) => {
    let holdAnswer: 'real' | 'pending' = 'real';
    const world = await startPaidWorld(t, provider, {
      checkUsage: true,
      // The hold's outcome can be made unknown (a slow chain); everything else settles for real.
      wrapFacilitator: settlingWith(async (payload, requirements, real) =>
        holdAnswer === 'pending'
          ? { status: 'pending', transaction: undefined, network: requirements.network, message: 'injected: outcome unknown' }
          : real.settle(payload, requirements),
      ),
    });
    const { hub, chain, db, payerKey, payTo, url, rail, secretOf, offerPlan, becomeStateful, ids, checks, api } = world;
    const escrow = chain.escrow!;
    const receiver = await startAccountReceiver(t, secretOf);
    await becomeStateful(receiver.url);
    const planId = await offerPlan({ name: 'Monthly', slug: 'monthly', billingMode: 'subscription_usage', basePriceUsd: '3.00' });
    t.equal(
      (await api.post('/v1/plan-meter-prices', hub.apiKey, { planId, meterId: ids.meter, priceUsd: '0.00', includedUnits: 5 })).status,
      201,
    );
    const payer = privateKeyToAccount(payerKey).address;
    const balances = async () => ({
      payer: await tokenBalance(chain, payer),
      escrow: await tokenBalance(chain, escrow),
      seller: await tokenBalance(chain, payTo),
    });
    /** A new agent buys the plan (`terms`: an amount), paid by the payer's wallet (an agent holds one account of a plan). */
    const buy = async (plan = planId, terms: Json = {}) => {
      const agent = await registerAgent(hub, 'acme');
      const headers = { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' };
      /** Pays `/extend` (with `?accessId=` to renew or top up) as the x402 client does: asked, signed, sent again. */
      const pay = async (query = '') => {
        const body = JSON.stringify({ planId: plan, ...terms });
        const challenge = await fetch(url(`/extend${query}`), { method: 'POST', headers, body });
        t.equal(challenge.status, 402);
        const requirements = ((await challenge.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
        const payment = Buffer.from(JSON.stringify(await signPayment(chain, payerKey, requirements))).toString('base64');
        const res = await fetch(url(`/extend${query}`), { method: 'POST', headers: { ...headers, 'payment-signature': payment }, body });
        return { requirements, status: res.status, body: (await res.json()) as Json };
      };
      const { requirements, status, body: bought } = await pay();
      return {
        requirements,
        status,
        body: bought,
        accessId: bought.account?.accessId as string,
        paymentId: bought.payment?.id as string,
        renew: () => pay(`?accessId=${bought.account.accessId}`),
        call: () => fetch(url('/search'), { headers: { authorization: `Bearer ${agent.token}` } }),
        receipt: async () => {
          const res = await fetch(url('/purchases/receipt'), { headers });
          const answer = (await res.json()) as Json;
          if (res.status !== 200) throw new Error(`receipt: ${res.status} ${JSON.stringify(answer)}`);
          return answer.purchases as Json[];
        },
      };
    };
    const worker = () => new AccountWriteWorker(db, hub.cp.masterKey, { live: rail }, silent, { schedule: FAST_DELIVERY, pollMs: 60_000 });
    const writeOf = (accessId: string) => db.accountWrite.findFirstOrThrow({ where: { accessId }, orderBy: { stateVersion: 'desc' } });
    /** Waits until the write is due (the seller's hint is capped to 300 ms here); a timer may fire a millisecond early. */
    const untilDue = async (accessId: string) => {
      const { nextAttemptAt } = await writeOf(accessId);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, nextAttemptAt.getTime() - Date.now()) + 5));
    };
    const attemptOf = (id: string) => db.paymentAttempt.findUniqueOrThrow({ where: { id } });
    const anvil = createTestClient({ mode: 'anvil', transport: http(chain.rpcUrl) });

    await t.test('returned to the payer on chain when the account write fails for good', async (t) => {
      const before = await balances();
      const bought = await buy();
      receiver.mode = { kind: 'status', status: 400, body: '{"error":"no such customer"}' };
      await worker().runOnce();
      t.match(await writeOf(bought.accessId), { status: 'failed' });
      const payment = await attemptOf(bought.paymentId);
      t.match(payment, { status: 'released', refundTxHash: /^0x[0-9a-f]{64}$/, chargedMicros: 0n });
      t.same(await balances(), before, 'the payer has it back; the seller got nothing');
      t.match(
        (await bought.receipt()).find((a) => a.accessId === bought.accessId),
        {
          status: 'suspended',
          provisioningState: 'failed',
          heldUsd: '0.000000',
          refundOwedUsd: '0.000000',
          refunds: [{ paymentId: bought.paymentId, amountUsd: '3.000000', transactionHash: payment.refundTxHash }],
        },
      );
      const analytics = await api.get(`/v1/analytics/sellers/${world.sellerId}?days=1`, hub.apiKey);
      t.match(
        (analytics.body.analytics.recentTransactions as Json[]).find((tx) => tx.id === bought.paymentId),
        { status: 'released', kind: 'purchase' },
        "the seller's analytics show it released",
      );

      // Paying again resumes it: the account goes to the seller again, and serves once the seller has it.
      receiver.mode = { kind: 'sdk', lifecycle: { lifecycle: 'provisioning', retryAfterSeconds: 1 } };
      const renewed = await bought.renew();
      t.equal(renewed.status, 201);
      t.match(renewed.body, {
        account: { status: 'active', provisioningState: 'pending', stateVersion: 2 },
        payment: { status: 'reserved' },
      });
      await worker().runOnce();
      t.equal((await bought.call()).status, 402, 'not served while the seller provisions it');
      t.match(checks.at(-1), { allowed: false, reason: 'access_inactive' });
      receiver.mode = { kind: 'sdk' };
      await untilDue(bought.accessId);
      await worker().runOnce();
      t.match(await writeOf(bought.accessId), { stateVersion: 2, status: 'applied' });
      t.match(await receiver.store.get(bought.accessId), { stateVersion: 2, status: 'active' }, 'the seller resumed it');
      t.match(await attemptOf(renewed.body.payment.id), { status: 'settled' }, 'and was paid');
      t.equal((await bought.call()).status, 200, 'it serves again');
    });

    await t.test('a hold whose outcome is not known yet: the account opens once the loop finishes it', async (t) => {
      receiver.mode = { kind: 'sdk' };
      holdAnswer = 'pending';
      const bought = await buy();
      t.equal(bought.status, 202);
      t.match(bought.body, { payment: { status: 'holding', holdTransactionHash: null } });
      t.equal((await attemptOf(bought.paymentId)).accessId, null, 'no account yet');
      holdAnswer = 'real';
      // As if the loop's next round came: what was verified before now is old enough.
      await db.paymentAttempt.update({ where: { id: bought.paymentId }, data: { verifiedAt: new Date(Date.now() - 60_000) } });
      await finishPendingPayments(db, { live: rail });
      t.match(await attemptOf(bought.paymentId), { status: 'reserved', holdTxHash: /^0x[0-9a-f]{64}$/, accessId: /^hubacc_/ });
      await worker().runOnce();
      t.match(await attemptOf(bought.paymentId), { status: 'settled' }, 'and is paid out once the seller has it');
    });
    await t.test('a payout the chain refuses is tried again, never recorded failed: the money is in the escrow', async (t) => {
      receiver.mode = { kind: 'sdk' };
      const bought = await buy();
      const escrowPayout = rail.escrow!.settle;
      rail.escrow!.settle = async (_payload, requirements) => ({
        status: 'failed',
        reason: 'transaction_rejected',
        network: requirements.network,
        message: 'injected: the node refused it',
      });
      await worker().runOnce();
      rail.escrow!.settle = escrowPayout;
      t.match(await attemptOf(bought.paymentId), { status: 'settling' }, 'still to be paid out');
      t.match(
        await db.access.findUniqueOrThrow({ where: { id: bought.accessId } }),
        { status: 'active' },
        'and the account is not suspended',
      );
      await db.paymentAttempt.update({ where: { id: bought.paymentId }, data: { verifiedAt: new Date(Date.now() - 60_000) } });
      await finishPendingPayments(db, { live: rail });
      t.match(await attemptOf(bought.paymentId), { status: 'settled' }, 'the pending loop pays it out');
    });

    await t.test('a top-up serves once the seller has it; one whose write fails goes back with its credit', async (t) => {
      receiver.mode = { kind: 'sdk' };
      const credits = await offerPlan({ name: 'Credits', slug: 'held-credits', billingMode: 'credit', minimumPurchaseUsd: '1.00' });
      t.equal((await api.post('/v1/plan-meter-prices', hub.apiKey, { planId: credits, meterId: ids.meter, priceUsd: '0.50' })).status, 201);
      const bought = await buy(credits, { amountUsd: '1.00' });
      await worker().runOnce();
      t.match(await writeOf(bought.accessId), { status: 'applied' });
      const account = async () => (await bought.receipt()).find((a) => a.accessId === bought.accessId);

      receiver.mode = { kind: 'sdk', lifecycle: { lifecycle: 'provisioning', retryAfterSeconds: 1 } };
      const topUp = await bought.renew();
      t.equal(topUp.status, 201);
      t.match(topUp.body, { account: { balanceUsd: '2.000000', heldUsd: '1.000000' }, payment: { status: 'reserved' } });
      await worker().runOnce();
      t.equal((await bought.call()).status, 200);
      t.equal((await bought.call()).status, 200, 'the credit the seller has pays two calls');
      t.equal((await bought.call()).status, 402, 'the top-up is not drawn on while the seller provisions it');
      t.match(checks.at(-1), { allowed: false, reason: 'usage_exhausted' });

      receiver.mode = { kind: 'status', status: 400, body: '{"error":"no such customer"}' };
      await untilDue(bought.accessId);
      await worker().runOnce();
      t.match(await writeOf(bought.accessId), { status: 'failed' });
      t.match(await attemptOf(topUp.body.payment.id), { status: 'released', refundTxHash: /^0x[0-9a-f]{64}$/ });
      t.match(
        await account(),
        { status: 'suspended', creditGrantedUsd: '1.000000', balanceUsd: '0.000000' },
        'its credit went back with the payment',
      );

      receiver.mode = { kind: 'sdk' };
      const again = await bought.renew();
      t.match(again.body, { account: { creditGrantedUsd: '2.000000', balanceUsd: '1.000000' } }, 'paying again buys what it pays for');
      await worker().runOnce();
      t.equal((await bought.call()).status, 200, 'and serves once the seller has it');
    });

    await t.test('a renewal serves once the seller has it; one whose write fails goes back with its period', async (t) => {
      receiver.mode = { kind: 'sdk' };
      const bought = await buy();
      await worker().runOnce();
      const { periodEnd: end } = await db.access.findUniqueOrThrow({ where: { id: bought.accessId } });
      // Time is moved, not state made: the month has passed.
      const ended = new Date(Date.now() - 1_000);
      await db.access.update({ where: { id: bought.accessId }, data: { periodEnd: ended } });
      t.ok(end! > ended);

      receiver.mode = { kind: 'sdk', lifecycle: { lifecycle: 'provisioning', retryAfterSeconds: 1 } };
      const renewed = await bought.renew();
      t.equal(renewed.status, 201);
      t.ok(new Date(renewed.body.account.period.end) > new Date(), 'the account shows the period bought');
      await worker().runOnce();
      t.equal((await bought.call()).status, 402, 'not served past the period the seller has');
      t.match(checks.at(-1), { allowed: false, reason: 'plan_expired' });

      receiver.mode = { kind: 'status', status: 400, body: '{"error":"no such customer"}' };
      await untilDue(bought.accessId);
      await worker().runOnce();
      t.match(await attemptOf(renewed.body.payment.id), { status: 'released' });
      t.match(
        await db.access.findUniqueOrThrow({ where: { id: bought.accessId } }),
        { status: 'suspended', periodEnd: ended, appliedPeriodEnd: null },
        'the period is back where the seller has it',
      );

      receiver.mode = { kind: 'sdk' };
      const again = await bought.renew();
      t.equal(again.status, 201);
      await worker().runOnce();
      t.match(await writeOf(bought.accessId), { status: 'applied' });
      t.equal((await bought.call()).status, 200, 'paying again serves once the seller has it');
    });

    await t.test('a pass records every write before it moves money: slow payouts never outlive its lease', async (t) => {
      receiver.mode = { kind: 'sdk' };
      const paid = await buy();
      const refused = await buy();
      receiver.refused.add(refused.accessId);
      const escrow = rail.escrow!;
      const settle = escrow.settle.bind(escrow);
      let release = () => {};
      const slow = new Promise<void>((resolve) => (release = resolve));
      escrow.settle = async (...args) => {
        await slow;
        return settle(...args);
      };
      const pass = worker().runOnce();
      try {
        // The payout waits on the chain; meanwhile both writes and what they mean are recorded.
        await until(
          async () =>
            (await writeOf(paid.accessId)).status === 'applied' &&
            (await attemptOf(paid.paymentId)).status === 'settling' &&
            (await writeOf(refused.accessId)).status === 'failed' &&
            (await attemptOf(refused.paymentId)).status === 'releasing',
          'both writes recorded while a payout waits',
        );
        t.pass('both writes recorded while a payout waits');
      } finally {
        release();
        await pass;
        escrow.settle = settle;
        receiver.refused.delete(refused.accessId);
      }
      t.match(await attemptOf(paid.paymentId), { status: 'settled' });
      t.match(await attemptOf(refused.paymentId), { status: 'released' });
    });

    // Last: the chain's clock runs 25 minutes ahead of the payer's from here on.
    await t.test('held in the escrow at purchase; paid out when the seller takes the account 25 minutes later', async (t) => {
      const before = await balances();
      const bought = await buy();
      t.equal(bought.requirements.payTo.toLowerCase(), escrow.toLowerCase(), 'the challenge names the escrow as payTo');
      t.equal(bought.status, 201);
      t.match(bought.body, {
        account: { provisioningState: 'pending', heldUsd: '3.000000', refunds: [] },
        payment: { status: 'reserved', holdTransactionHash: /^0x[0-9a-f]{64}$/, settleTransactionHash: null, refundTransactionHash: null },
      });
      const held = { payer: before.payer - 3_000_000n, escrow: before.escrow + 3_000_000n, seller: before.seller };
      t.same(await balances(), held, 'the payment moved into the escrow, not to the seller');

      receiver.mode = { kind: 'sdk', lifecycle: { lifecycle: 'provisioning', retryAfterSeconds: 1800 } };
      await worker().runOnce();
      t.match(await writeOf(bought.accessId), { status: 'pending', attempts: 1 }, 'the seller is provisioning');
      t.equal((await bought.call()).status, 402, 'a call on the account is challenged, not served');
      t.match(checks.at(-1), { allowed: false, reason: 'access_inactive' }, 'the usage check refuses it');

      // 25 minutes on the chain: the payer's authorization (300 s) has long lapsed there.
      await anvil.increaseTime({ seconds: 25 * 60 });
      await anvil.mine({ blocks: 1 });
      receiver.mode = { kind: 'sdk' };
      await untilDue(bought.accessId);
      await worker().runOnce();
      t.match(await writeOf(bought.accessId), { status: 'applied' });
      const payment = await attemptOf(bought.paymentId);
      t.match(payment, { status: 'settled', settleTxHash: /^0x[0-9a-f]{64}$/, chargedMicros: 3_000_000n });
      t.not(payment.settleTxHash, payment.holdTxHash, 'paid out by a transaction of its own');
      t.same(await balances(), { ...held, escrow: before.escrow, seller: before.seller + 3_000_000n }, 'paid out to the seller');

      t.equal((await bought.call()).status, 200, 'once the seller has it, the account pays for calls');
      t.match(checks.at(-1), { allowed: true });
      t.match(
        (await bought.receipt()).find((a) => a.accessId === bought.accessId),
        { provisioningState: 'active', heldUsd: '0.000000' },
      );
    });
  });

  t.test(`a rail without an escrow refuses to sell accounts, on ${provider}`, async (t) => {
    const { hub, url, secretOf, offerPlan, becomeStateful } = await startPaidWorld(t, provider, { escrow: false });
    const receiver = await startAccountReceiver(t, secretOf);
    await becomeStateful(receiver.url);
    const planId = await offerPlan({ name: 'Monthly', slug: 'monthly', billingMode: 'subscription', basePriceUsd: '3.00' });
    const agent = await registerAgent(hub, 'acme');
    const res = await fetch(url('/extend'), {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ planId }),
    });
    t.equal(res.status, 503);
    t.match(await res.json(), { error: 'held_payment_unavailable', reason: /held until the seller has the account/ });
  });
}
