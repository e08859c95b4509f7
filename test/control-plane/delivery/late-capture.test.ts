import pino from 'pino';
import t from 'tap';
import { AccountWriteWorker } from '../../../control-plane/delivery/account-write-worker.js';
import { finishPendingSettlements } from '../../../control-plane/payments/settlement/pending.js';
import { suspendUnpaidCapture } from '../../../control-plane/storefront/pending-payments.js';
import type { PaymentRequirements } from '../../../shared/payments/x402-wire.js';
import { startAccountReceiver } from '../../helpers/account-receiver.js';
import { registerAgent } from '../../helpers/agents.js';
import { testProviders } from '../../helpers/database.js';
import { settlingWith } from '../../helpers/local-facilitator.js';
import { startPaidWorld } from '../../helpers/paid-world.js';
import { signPayment } from '../../helpers/sign-payment.js';

// A stateful seller's purchase is captured once the seller takes the account. A capture whose
// outcome is not known at once is finished by the settlement loop; if that finds it failed, the
// account was not paid for and is suspended, as when the delivery worker sees the failure itself.

for (const provider of testProviders()) {
  t.test(`a capture that fails in the settlement loop suspends the account, on ${provider}`, async (t) => {
    let answer: 'pending' | 'failed' = 'pending';
    const scripted = settlingWith(async (_p, r) =>
      answer === 'pending'
        ? { status: 'pending', transaction: undefined, network: r.network, message: 'injected: outcome unknown' }
        : { status: 'failed', reason: 'authorization_expired', network: r.network, message: 'injected: lapsed' },
    );
    const { hub, chain, db, payerKey, url, rail, secretOf, offerPlan, becomeStateful } = await startPaidWorld(t, provider, {
      wrapFacilitator: scripted,
    });
    const receiver = await startAccountReceiver(t, secretOf);
    await becomeStateful(receiver.url);
    const planId = await offerPlan({ name: 'Monthly', slug: 'monthly', billingMode: 'subscription', basePriceUsd: '3.00' });
    const agent = await registerAgent(hub, 'acme');

    const headers = { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' };
    const body = JSON.stringify({ planId });
    const challenge = await fetch(url('/extend'), { method: 'POST', headers, body });
    const requirements = ((await challenge.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
    const payment = Buffer.from(JSON.stringify(await signPayment(chain, payerKey, requirements))).toString('base64');
    const bought = await fetch(url('/extend'), { method: 'POST', headers: { ...headers, 'payment-signature': payment }, body });
    t.equal(bought.status, 201);
    const { account } = (await bought.json()) as { account: { accessId: string } };

    // The seller takes the account; the capture's outcome is not known yet.
    await new AccountWriteWorker(db, hub.cp.masterKey, rail, pino({ level: 'silent' }), { pollMs: 60_000 }).runOnce();
    const attempt = await db.paymentAttempt.findFirstOrThrow({ where: { accessId: account.accessId } });
    t.equal(attempt.status, 'settling');
    t.match(await db.access.findUniqueOrThrow({ where: { id: account.accessId } }), { status: 'active', stateVersion: 1 });

    answer = 'failed';
    await finishPendingSettlements(db, rail, 0, suspendUnpaidCapture);
    t.match(await db.paymentAttempt.findUniqueOrThrow({ where: { id: attempt.id } }), { status: 'failed' });
    t.match(await db.access.findUniqueOrThrow({ where: { id: account.accessId } }), { status: 'suspended', stateVersion: 2 });
    t.equal(await db.accountWrite.count({ where: { accessId: account.accessId } }), 2, 'the seller hears it in a new write');
  });
}
