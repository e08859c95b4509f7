import t from 'tap';
import type { PaymentRequirements } from '../../../shared/payments/x402-wire.js';
import { registerAgent } from '../../helpers/agents.js';
import { chainControls, startTestChain, tokenBalance } from '../../helpers/chain.js';
import { testProviders } from '../../helpers/database.js';
import { startProcessWorld } from '../../helpers/process-world.js';
import { eventually } from '../../helpers/processes.js';
import { signPayment } from '../../helpers/sign-payment.js';

// A purchase at the pay URL with its control-plane killed (SIGKILL) between the payment and the
// account: the purchase's settlement waits in the chain's pool (automine off) when the process
// dies, so the payment is on its way and no account is open yet. Started again, with the block
// mined, the pending loop records the payment settled and opens the account: paid once, one
// account, and the same payment sent again buys nothing more. Real processes, both databases.

t.test('a purchase killed between its payment and its account', async (t) => {
  const chain = await startTestChain(t);
  const controls = chainControls(t, chain);

  for (const provider of testProviders()) {
    await t.test(provider, async (t) => {
      const w = await startProcessWorld(t, provider, chain);
      t.equal(await w.cli(['seller', 'stateful-access', w.catalog.sellerId, '--sales', 'on']), 0, 'sales opened by the operator');
      const offered = await w.api.post('/v1/plans', w.apiKey, {
        serviceId: w.catalog.serviceId,
        name: 'Monthly',
        slug: 'monthly',
        billingMode: 'subscription',
        basePriceUsd: '3.00',
      });
      t.equal(offered.status, 201, 'a $3 monthly plan');
      const agent = await registerAgent(w, 'acme');
      const body = JSON.stringify({ planId: offered.body.plan.id });
      const headers = { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' };
      const asked = await w.pay('acme', '/extend', { method: 'POST', headers, body });
      t.equal(asked.status, 402, 'the purchase is challenged');
      const requirements = ((await asked.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
      const payment = Buffer.from(JSON.stringify(await signPayment(chain, w.payerKey, requirements))).toString('base64');
      const paid = () => w.pay('acme', '/extend', { method: 'POST', headers: { ...headers, 'payment-signature': payment }, body });
      const receipt = async () =>
        ((await (await w.pay('acme', '/purchases/receipt', { headers })).json()) as { purchases: { accessId: string; status: string }[] })
          .purchases;
      const before = { payee: await tokenBalance(chain, w.payTo), payer: await tokenBalance(chain, w.payer) };

      await controls.automine(false);
      const answer = paid().then(
        async (res) => ({ status: res.status, body: await res.text() }),
        () => 'cut' as const,
      );
      t.ok(await eventually(async () => (await controls.pending()) > 0, 60_000), 'the payment’s transaction is in the pool');
      const attemptOf = () => w.db.paymentAttempt.findFirst({ where: { kind: { not: 'call' }, pathAndQuery: '/extend' } });
      t.equal((await attemptOf())?.accessId, null, 'and no account is open yet');
      // Mined while the control-plane is down: the restarted one finds the transfer on chain. (Still
      // in the pool when the restarted one looks, it stays settling until mined: docs/decisions.md#D-275.)
      await w.restartControlPlane(async () => {
        await controls.mine();
        await controls.automine(true);
      });
      t.match(
        await answer,
        { status: 503, body: /"error":"service_unavailable"/ },
        'the buyer is told to come back (503), not handed a 500: the proxy could not reach the control-plane',
      );

      t.ok(
        await eventually(async () => {
          const attempt = await attemptOf();
          return attempt?.status === 'settled' && attempt.accessId !== null;
        }, 60_000),
        'the restarted control-plane records it paid and opens the account',
      );
      const purchases = await receipt();
      t.match(purchases, [{ status: 'active' }], 'the buyer has one account');
      t.equal(purchases.length, 1);
      const moved = { payee: before.payee + 3_000_000n, payer: before.payer - 3_000_000n };
      t.same({ payee: await tokenBalance(chain, w.payTo), payer: await tokenBalance(chain, w.payer) }, moved, 'three dollars moved, once');

      const again = await paid();
      t.match(
        { status: again.status, body: await again.json() },
        { status: 409, body: { error: 'payment_request_already_completed' } },
        'the same payment sent again is told it was used',
      );
      t.equal((await receipt()).length, 1, 'the same payment sent again opens nothing more');
      t.same({ payee: await tokenBalance(chain, w.payTo), payer: await tokenBalance(chain, w.payer) }, moved, 'and moves nothing more');
    });
  }
});
