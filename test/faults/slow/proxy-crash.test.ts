import t from 'tap';
import type { PaymentRequirements } from '../../../shared/payments/x402-wire.js';
import { registerAgent } from '../../helpers/agents.js';
import { chainControls, startTestChain, tokenBalance } from '../../helpers/chain.js';
import { testProviders } from '../../helpers/database.js';
import { startProcessWorld } from '../../helpers/process-world.js';
import { eventually } from '../../helpers/processes.js';
import { signPayment } from '../../helpers/sign-payment.js';

// The proxy killed (SIGKILL) at chosen points of a purchase and of a paid call, and started again:
// the control-plane finishes what it was asked, once, and a paid call the proxy never settled is
// released after HUB_STRANDED_CALL_MS with nothing charged. The seller's time to answer is cut
// short here (2 s + 1 s) so that a stranded call can be taken for one within the test: no point
// below holds a call at the seller past it. Real processes, both databases.

const STRANDED_CALL_MS = 4_000;

t.test('a purchase and a paid call survive their proxy being killed', async (t) => {
  const chain = await startTestChain(t);
  const controls = chainControls(t, chain);

  for (const provider of testProviders()) {
    await t.test(provider, async (t) => {
      const w = await startProcessWorld(t, provider, chain, {
        HUB_UPSTREAM_HEADERS_TIMEOUT_MS: '2000',
        HUB_UPSTREAM_BODY_TIMEOUT_MS: '1000',
        HUB_STRANDED_CALL_MS: String(STRANDED_CALL_MS),
      });
      const balances = async () => ({ payee: await tokenBalance(chain, w.payTo), payer: await tokenBalance(chain, w.payer) });
      const moved = (before: { payee: bigint; payer: bigint }, micros: bigint) => ({
        payee: before.payee + micros,
        payer: before.payer - micros,
      });
      const attemptOf = (pathAndQuery: string) => w.db.paymentAttempt.findFirst({ where: { pathAndQuery } });
      /** A payment signed by hand for the challenge `path` answers, so the very same one can be sent again. */
      const signedFor = async (path: string, init: RequestInit = {}) => {
        const challenge = await fetch(w.payUrl(path), init);
        t.equal(challenge.status, 402, `${path} is challenged`);
        const requirements = ((await challenge.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
        return Buffer.from(JSON.stringify(await signPayment(chain, w.payerKey, requirements))).toString('base64');
      };

      await t.test('killed while a purchase’s payment waits in the chain’s pool: one account, paid once', async (t) => {
        t.equal(await w.cli(['seller', 'stateful-access', w.catalog.sellerId, '--sales', 'on']), 0, 'sales opened by the operator');
        const offered = await w.api.post('/v1/plans', w.apiKey, {
          serviceId: w.catalog.serviceId,
          name: 'Monthly',
          slug: 'monthly',
          billingMode: 'subscription',
          basePriceUsd: '2.00',
        });
        t.equal(offered.status, 201, 'a $2 monthly plan');
        const agent = await registerAgent(w, 'acme');
        const headers = { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' };
        const body = JSON.stringify({ planId: offered.body.plan.id });
        const payment = await signedFor('/extend', { method: 'POST', headers, body });
        const paid = () => fetch(w.payUrl('/extend'), { method: 'POST', headers: { ...headers, 'payment-signature': payment }, body });
        const before = await balances();

        await controls.automine(false);
        const answer = paid().then(
          (res) => res.status,
          () => 'cut' as const,
        );
        t.ok(await eventually(async () => (await controls.pending()) > 0, 60_000), 'the payment’s transaction is in the pool');
        await w.restartProxy(async () => {
          t.equal(await answer, 'cut', 'the buyer’s connection went with the proxy');
          await controls.mine();
          await controls.automine(true);
        });

        t.ok(
          await eventually(async () => {
            const attempt = await attemptOf('/extend');
            return attempt?.status === 'settled' && attempt.accessId !== null;
          }, 60_000),
          'the control-plane finished the purchase it was asked for: paid, and the account open',
        );
        const receipt = await fetch(w.payUrl('/purchases/receipt'), { headers });
        const { purchases } = (await receipt.json()) as { purchases: { status: string }[] };
        t.match(purchases, [{ status: 'active' }], 'the buyer finds one account through the new proxy');
        t.equal(purchases.length, 1);
        t.same(await balances(), moved(before, 2_000_000n), 'two dollars moved, once');
        const again = await paid();
        t.match(
          { status: again.status, body: await again.json() },
          { status: 409, body: { error: 'payment_request_already_completed' } },
          'the same payment sent again is told it was used, and buys nothing more',
        );
        t.same(await balances(), moved(before, 2_000_000n), 'and moves nothing more');
      });

      await t.test('killed while a paid call’s settlement waits in the chain’s pool: settled once', async (t) => {
        const before = await balances();
        const served = w.served.length;
        const payment = await signedFor('/search?point=proxy-pool');
        await controls.automine(false);
        const call = fetch(w.payUrl('/search?point=proxy-pool'), { headers: { 'payment-signature': payment } }).then(
          (res) => res.status,
          () => 'cut' as const,
        );
        t.ok(await eventually(async () => (await controls.pending()) > 0, 60_000), 'the settlement’s transaction is in the pool');
        await w.restartProxy(async () => {
          t.equal(await call, 'cut', 'the agent’s connection went with the proxy');
          await controls.mine();
          await controls.automine(true);
        });
        t.ok(
          await eventually(async () => (await attemptOf('/search?point=proxy-pool'))?.status === 'settled', 60_000),
          'the control-plane records the settlement it was asked for',
        );
        t.same(await balances(), moved(before, 10_000n), 'one cent moved, once');
        t.equal(w.served.length, served + 1, 'the seller was called once');
        const again = await fetch(w.payUrl('/search?point=proxy-pool'), { headers: { 'payment-signature': payment } });
        t.not(again.status, 200, `the same payment sent again is not served again (${again.status})`);
        await again.arrayBuffer();
        t.same(await balances(), moved(before, 10_000n), 'and moves nothing more');
      });

      await t.test('killed while the seller holds a paid call: released after HUB_STRANDED_CALL_MS, nothing charged', async (t) => {
        const before = await balances();
        const served = w.served.length;
        const payment = await signedFor('/hold?point=stranded');
        const call = fetch(w.payUrl('/hold?point=stranded'), { headers: { 'payment-signature': payment } }).catch(() => 'cut' as const);
        t.ok(await eventually(() => w.served.length > served, 60_000), 'the seller holds the paid call');
        let heldAt = 0;
        // Looked at while the proxy is down: its start-up, on a busy machine, can take longer than HUB_STRANDED_CALL_MS.
        await w.restartProxy(async () => {
          t.equal(await call, 'cut', 'the agent’s connection went with the proxy');
          heldAt = Date.now();
          t.equal((await attemptOf('/hold?point=stranded'))?.status, 'in_flight', 'the claim is in flight: no proxy will settle it');
        });

        t.ok(
          await eventually(async () => (await attemptOf('/hold?point=stranded'))?.status === 'released', 60_000),
          'the pending loop releases it',
        );
        const attempt = await attemptOf('/hold?point=stranded');
        t.ok(Date.now() - attempt!.verifiedAt!.getTime() >= STRANDED_CALL_MS, 'only once it was in flight for HUB_STRANDED_CALL_MS');
        t.ok(Date.now() - heldAt < 60_000, 'not 15 minutes later');
        t.equal(attempt!.chargedMicros, 0n, 'charged nothing');

        const again = await fetch(w.payUrl('/hold?point=stranded'), { headers: { 'payment-signature': payment } });
        t.not(again.status, 200, `the same payment sent again is not served (${again.status})`);
        await again.arrayBuffer();
        w.releaseHold();
        t.equal(w.served.length, served + 1, 'the seller was called once');
        t.same(await balances(), before, 'and no money moved: the authorization was never submitted');
      });
    });
  }
});
