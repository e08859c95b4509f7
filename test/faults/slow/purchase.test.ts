import t from 'tap';
import type { PaymentRequirements } from '../../../shared/payments/x402-wire.js';
import { startAccountReceiver } from '../../helpers/account-receiver.js';
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
// account, and the same payment sent again buys nothing more. Then the same at a stateful seller,
// whose purchase is held in the escrow until the seller has the account: the hold waits in the
// pool, and after the restart the account is opened, written to the seller once, and the escrow
// pays the seller out once. Real processes, both databases.

t.test('a purchase killed between its payment and its account', async (t) => {
  const chain = await startTestChain(t);
  const controls = chainControls(t, chain);

  for (const provider of testProviders()) {
    await t.test(provider, async (t) => {
      const w = await startProcessWorld(t, provider, chain);
      t.equal(await w.cli(['seller', 'stateful-access', w.catalog.sellerId, '--sales', 'on']), 0, 'sales opened by the operator');
      const agent = await registerAgent(w, 'acme');
      const headers = { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' };
      const balances = async () => ({
        payee: await tokenBalance(chain, w.payTo),
        payer: await tokenBalance(chain, w.payer),
        escrow: await tokenBalance(chain, chain.escrow!),
      });
      const receipt = async () =>
        ((await (await w.pay('acme', '/purchases/receipt', { headers })).json()) as { purchases: { accessId: string; status: string }[] })
          .purchases;

      /**
       * Offers a plan at `priceUsd`, buys it with its control-plane killed while the payment's
       * transaction waits in the pool (mined while it is down), and returns what a test checks.
       */
      const buyThroughACrash = async (slug: string, priceUsd: string) => {
        const offered = await w.api.post('/v1/plans', w.apiKey, {
          serviceId: w.catalog.serviceId,
          name: slug,
          slug,
          billingMode: 'subscription',
          basePriceUsd: priceUsd,
        });
        t.equal(offered.status, 201, `a $${priceUsd} plan`);
        const body = JSON.stringify({ planId: offered.body.plan.id });
        const asked = await w.pay('acme', '/extend', { method: 'POST', headers, body });
        t.equal(asked.status, 402, 'the purchase is challenged');
        const requirements = ((await asked.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
        const payment = Buffer.from(JSON.stringify(await signPayment(chain, w.payerKey, requirements))).toString('base64');
        const paid = () => w.pay('acme', '/extend', { method: 'POST', headers: { ...headers, 'payment-signature': payment }, body });
        const before = await balances();

        await controls.automine(false);
        const answer = paid().then(
          async (res) => ({ status: res.status, body: await res.text() }),
          () => 'cut' as const,
        );
        t.ok(await eventually(async () => (await controls.pending()) > 0, 60_000), 'the payment’s transaction is in the pool');
        const attemptOf = () => w.db.paymentAttempt.findFirst({ where: { planId: offered.body.plan.id, kind: { not: 'call' } } });
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
        return { requirements, paid, before, attemptOf };
      };
      const sentAgain = async (paid: () => Promise<Response>) => {
        const again = await paid();
        t.match(
          { status: again.status, body: await again.json() },
          { status: 409, body: { error: 'payment_request_already_completed' } },
          'the same payment sent again is told it was used',
        );
      };

      await t.test('at a seller that keeps no accounts', async (t) => {
        const { paid, before, attemptOf } = await buyThroughACrash('monthly', '3.00');
        t.ok(
          await eventually(async () => {
            const attempt = await attemptOf();
            return attempt?.status === 'settled' && attempt.accessId !== null;
          }, 60_000),
          'the restarted control-plane records it paid and opens the account',
        );
        t.match(await receipt(), [{ status: 'active' }], 'the buyer has one account');
        const moved = { ...before, payee: before.payee + 3_000_000n, payer: before.payer - 3_000_000n };
        t.same(await balances(), moved, 'three dollars moved, once');
        await sentAgain(paid);
        t.equal((await receipt()).length, 1, 'the same payment sent again opens nothing more');
        t.same(await balances(), moved, 'and moves nothing more');
      });

      await t.test('at a stateful seller: held, written to the seller once, paid out once', async (t) => {
        const receiver = await startAccountReceiver(t, (kid) => w.sellerSecrets.get(kid));
        const stateful = await w.api.put(`/v1/sellers/${w.catalog.sellerId}/stateful-access`, w.apiKey, {
          stateful: true,
          accessEndpointUrl: receiver.url,
        });
        t.equal(stateful.status, 200, 'the seller keeps accounts of its own');
        const { requirements, paid, before, attemptOf } = await buyThroughACrash('yearly', '5.00');
        t.equal(requirements.payTo.toLowerCase(), chain.escrow!.toLowerCase(), 'challenged to the escrow');

        t.ok(
          await eventually(async () => (await attemptOf())?.status === 'settled', 60_000),
          'the restarted control-plane holds it, opens the account, and pays it out once the seller has it',
        );
        const { accessId } = (await attemptOf())!;
        t.ok(accessId, 'the payment bought an account');
        const writes = receiver.requests.filter((r) => r.requestId?.startsWith(`${accessId}:`));
        t.same(
          writes.map((r) => r.requestId),
          [`${accessId}:1`],
          'the seller was written the account once',
        );
        t.match(await receiver.store.get(accessId!), { accessId, agentId: agent.agentId });
        const moved = { payee: before.payee + 5_000_000n, payer: before.payer - 5_000_000n, escrow: before.escrow };
        t.same(await balances(), moved, 'five dollars moved from the payer to the seller, once; the escrow holds nothing of it');
        await sentAgain(paid);
        t.same(await balances(), moved, 'and moves nothing more');
      });
    });
  }
});
