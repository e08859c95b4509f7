import t from 'tap';
import type { Hex } from 'viem';
import type { PaymentRequirements } from '../../shared/payments/x402-wire.js';
import { startTestChain, tokenBalance } from '../helpers/chain.js';
import { managementClient, type Reply } from '../helpers/management.js';
import { useLoopbackResolver } from '../helpers/paid-world.js';
import { paygCatalog, startPaygSeller } from '../helpers/payg-seller.js';
import { hubProcessesEnv } from '../helpers/process-world.js';
import { bootstrapHub, freePort, runHub, waitForStatus } from '../helpers/processes.js';
import { signPayment } from '../helpers/sign-payment.js';
import { x402Fetch } from '../helpers/x402-agent.js';

// Replicas (issue: every core, many replicas): two control-planes and two proxies, each a real
// `hub start` process, on one PostgreSQL database and one chain. What must be unique holds across
// them, and what one changes the others see within a second. Each proxy asks its own control-plane.

if (!process.env.HUB_TEST_PG_URL) {
  t.pass('replicas run on PostgreSQL only (set HUB_TEST_PG_URL); SQLite is one process’s database');
} else {
  t.test('two control-planes and two proxies on one PostgreSQL', async (t) => {
    const chain = await startTestChain(t);
    const processes = await hubProcessesEnv(t, 'postgresql', chain);
    const { db } = processes;
    const shared = { ...processes.env, HUB_PAGE_VIEWS_PER_MINUTE: '6' };
    const replicas = await Promise.all(
      ['a', 'b'].map(async (name) => {
        const cpPort = await freePort();
        const proxyPort = await freePort();
        const env = { ...shared, HUB_CONTROL_PLANE_PORT: String(cpPort), HUB_PROXY_PORT: String(proxyPort) };
        runHub(t, ['start', 'control-plane'], env);
        return { name, env, cp: `http://127.0.0.1:${cpPort}`, proxyPort };
      }),
    );
    for (const replica of replicas) t.ok(await waitForStatus(`${replica.cp}/readyz`, 200), `control-plane ${replica.name} is ready`);
    for (const replica of replicas) {
      runHub(t, ['start', 'proxy'], { ...replica.env, HUB_CONTROL_PLANE_URL: replica.cp });
      t.ok(await waitForStatus(`http://127.0.0.1:${replica.proxyPort}/readyz`, 200), `proxy ${replica.name} is ready`);
    }
    const [a, b] = replicas as [(typeof replicas)[number], (typeof replicas)[number]];
    useLoopbackResolver(t);

    const boot = await bootstrapHub(a.env, 'Replicas');
    const api = (replica: typeof a) => managementClient(replica.cp);

    // The seller: asks for payment the first time it sees a request id, serves the paid retry.
    /** What `/report` did before answering: the same usage report sent to every control-plane at once. */
    let reportedTwice: Reply[] = [];
    const {
      url: upstreamUrl,
      secrets,
      served,
    } = await startPaygSeller(t, 'forecast', async (req, identity) => {
      if (req.url !== '/report') return;
      const body = {
        idempotencyKey: `report-${identity.requestId}`,
        zcRequestId: identity.requestId,
        serviceSlug: 'forecast',
        usage: [{ meterSlug: 'calls', quantity: 1 }],
      };
      reportedTwice = await Promise.all([a, b, a, b].map((replica) => api(replica).post('/v1/usage', boot.apiKey, body)));
    });

    const payTo = chain.accounts[2]!.address;
    const payerKey = chain.accounts[3]!.privateKey as Hex;
    const acme = await paygCatalog(api(a), boot.apiKey, {
      slug: 'acme',
      serviceSlug: 'forecast',
      upstreamBaseUrl: upstreamUrl,
      payToAddress: payTo,
      network: chain.network,
      secrets,
    });
    const payUrl = (replica: typeof a, path = '/forecast') => `http://acme.pay.localhost:${replica.proxyPort}${path}`;
    const pay = x402Fetch(payerKey);
    /**
     * The payee's balance once it reaches `expected` (a settlement may finish after its answer went
     * out), or as it stands after 10 s: settled late, or more than once, shows.
     */
    const paidOnChain = async (expected: bigint) => {
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
        const balance = await tokenBalance(chain, payTo);
        if (balance >= expected) return balance;
      }
      return tokenBalance(chain, payTo);
    };

    await t.test('paid calls through either proxy: each settled once, the settlers’ nonces never collide', async (t) => {
      const before = await tokenBalance(chain, payTo);
      const answers = await Promise.all(
        [a, b, a, b, a, b].map(async (replica) => {
          const res = await pay(payUrl(replica));
          await res.arrayBuffer();
          return res.status;
        }),
      );
      t.same(answers, [200, 200, 200, 200, 200, 200]);
      t.equal(await paidOnChain(before + 60_000n), before + 60_000n, 'six cents, once each');
      t.same(
        (await db.paymentAttempt.findMany({ where: { paymentPayloadJson: { not: null } } })).map((p) => p.status),
        Array(6).fill('settled'),
        'no settlement refused for a nonce the other settler took',
      );
    });

    await t.test('one payment sent to both proxies at once: forwarded once, settled once', async (t) => {
      const challenge = await fetch(payUrl(a));
      t.equal(challenge.status, 402);
      const requirements = ((await challenge.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
      const payment = Buffer.from(JSON.stringify(await signPayment(chain, payerKey, requirements))).toString('base64');
      const before = { payee: await tokenBalance(chain, payTo), served: served.length };
      const answers = await Promise.all(
        [a, b].map(async (replica) => {
          const res = await fetch(payUrl(replica), { headers: { 'payment-signature': payment } });
          return { status: res.status, body: await res.text() };
        }),
      );
      t.equal(answers.filter((answer) => answer.status === 200).length, 1, `one is served: ${JSON.stringify(answers)}`);
      t.equal(served.length, before.served + 1, 'the seller sees it once');
      t.equal(await paidOnChain(before.payee + 10_000n), before.payee + 10_000n, 'and is paid once');
      t.equal(await db.paymentAttempt.count({ where: { status: 'settled' } }), 7, 'one settlement more');
    });

    await t.test('one idempotency key reported to both control-planes at once: one event', async (t) => {
      const res = await pay(payUrl(a, '/report'));
      t.equal(res.status, 200);
      await res.arrayBuffer();
      t.same(
        reportedTwice.map((answer) => answer.status),
        [200, 200, 200, 200],
        `every replica answers it: ${JSON.stringify(reportedTwice.map((x) => x.body))}`,
      );
      t.equal(reportedTwice.filter((answer) => answer.body.duplicate === false).length, 1, 'one records it');
      t.equal(new Set(reportedTwice.map((answer) => answer.body.id)).size, 1, 'all answer with its id');
      t.equal(await db.usageEvent.count({ where: { requestId: served.at(-1) } }), 1, 'one event');
    });

    await t.test('an API key revoked on one control-plane is refused by the other within a second', async (t) => {
      const { key, apiKey } = (await api(a).post('/v1/api-keys', boot.sessionToken, { name: 'CI', scopes: ['usage:read', 'usage:write'] }))
        .body;
      const check = () =>
        api(b).post('/v1/usage/check', key, { zcRequestId: 'hubreq_unknown', serviceSlug: 'forecast', usage: [{ meterSlug: 'calls' }] });
      t.equal((await check()).status, 200, 'the other control-plane takes it, and remembers it');
      t.equal((await api(a).delete(`/v1/api-keys/${apiKey.id}`, boot.sessionToken)).status, 204);
      const revokedAt = Date.now();
      let refused: Awaited<ReturnType<typeof check>> | undefined;
      while (!refused && Date.now() - revokedAt < 1_000) {
        const answer = await check();
        if (answer.status === 401) refused = answer;
      }
      t.match(refused, { status: 401, body: { error: 'invalid_token' } }, 'refused within 1 s');
    });

    await t.test('a rate limit holds across control-planes: page views per organization', async (t) => {
      // Not in the last seconds of a minute: the window would turn under the test.
      while (Date.now() % 60_000 > 50_000) await new Promise((resolve) => setTimeout(resolve, 200));
      const view = (replica: typeof a) =>
        api(replica).post('/v1/page-views', boot.apiKey, {
          seller: acme.sellerId,
          path: '/docs',
          status: 200,
          userAgent: 'ChatGPT-User/1.0',
          clientIp: '203.0.113.7',
        });
      for (let i = 0; i < 6; i++) t.equal((await view(a)).status, 204, `view ${i + 1} of the organization’s 6 a minute`);
      // The other replica hears of them at its first view of the organization (and every 250 ms).
      let acceptedByB = 0;
      let refused: Reply | undefined;
      while (!refused && acceptedByB < 6) {
        const answer = await view(b);
        if (answer.status === 429) refused = answer;
        else acceptedByB++;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      t.match(refused, { status: 429, body: { error: 'rate_limited' } }, 'the other control-plane refuses too');
      t.ok(acceptedByB < 6, `before it took a budget of its own (it let ${acceptedByB} through before it knew)`);
    });

    await t.test('a price changed through one control-plane is what the other proxy asks within a second', async (t) => {
      const changed = await api(a).patch(`/v1/plan-meter-prices/${acme.planMeterPriceId}`, boot.apiKey, { priceUsd: '0.02' });
      t.equal(changed.status, 200);
      const changedAt = Date.now();
      let amount: string | undefined;
      while (amount !== '0.020000' && Date.now() - changedAt < 1_000) {
        const res = await fetch(payUrl(b));
        amount = ((await res.json()) as { payment?: { amountUsd?: string } }).payment?.amountUsd;
      }
      t.equal(amount, '0.020000', 'the new price within 1 s');
    });
  });
}
