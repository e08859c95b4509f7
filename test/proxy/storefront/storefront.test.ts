import t from 'tap';
import { setStatefulFlags } from '../../../control-plane/catalog/sellers.js';
import { registerAgent } from '../../helpers/agents.js';
import { seedPricedService } from '../../helpers/catalog-seed.js';
import { testProviders } from '../../helpers/database.js';
import { startTestHub } from '../../helpers/hub.js';
import { sellerBehind, startTestUpstream } from '../../helpers/upstream.js';

// The storefront's paths are hub's, not the seller's, and every refusal made before payment
// (spec: Errors agents see at the pay URL) is made before anything is asked or forwarded. Buying
// itself is walked end to end in purchases.test.ts.

for (const provider of testProviders()) {
  t.test(`storefront refusals on ${provider}`, async (t) => {
    const hub = await startTestHub(t, provider);
    const upstream = await startTestUpstream(t);
    const seller = await sellerBehind(hub, upstream);
    const db = hub.cp.db;
    const agent = await registerAgent(hub, 'acme');
    const extend = (body: unknown, token: string | undefined = agent.token) =>
      hub.pay('acme', '/extend', {
        method: 'POST',
        body: typeof body === 'string' ? body : JSON.stringify(body),
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      });
    const answer = async (res: Response) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> });
    const payg = await seedPricedService(db, { organizationId: hub.organizationId, sellerId: seller.id, priceMicros: 10_000n });
    const before = upstream.seen.length;

    await t.test('only registered agents, and never forwarded', async (t) => {
      for (const [path, method] of [
        ['/extend', 'POST'],
        ['/purchases/receipt', 'GET'],
        ['/keys/redeem', 'POST'],
      ] as const) {
        const res = await answer(await hub.pay('acme', path, { method }));
        t.equal(res.status, 401, path);
        t.match(res.body, { error: 'bearer_required', auth: { registerUrl: /\/agents\/register$/ } });
      }
      t.equal((await hub.pay('acme', '/extend', { headers: { authorization: `Bearer ${agent.token}` } })).status, 405);
    });

    await t.test('a storefront that sells nothing is 501, whatever is asked', async (t) => {
      t.match(
        await answer(await extend({ planId: payg.planId })),
        { status: 501, body: { error: 'entitlements_not_available' } },
        'sales off',
      );
      await setStatefulFlags(db, seller.id, { sales: true });
      t.match(
        await answer(await extend({ planId: payg.planId })),
        { status: 501, body: { error: 'entitlements_not_available', reason: /sells no plans/ } },
        'sales on, but only pay-as-you-go',
      );
    });

    const credit = await db.plan.create({
      data: {
        id: 'pln_creditcreditcreditcredit',
        organizationId: hub.organizationId,
        serviceId: payg.serviceId,
        name: 'Credits',
        slug: 'credits',
        billingMode: 'credit',
        interval: 'none',
        minimumPurchaseMicros: 5_000_000n,
        verifiedEmailPolicy: 'off',
      },
    });

    await t.test('each refusal before payment, in order', async (t) => {
      const cases: [unknown, number, Record<string, unknown>][] = [
        ['{not json', 400, { error: 'invalid_request', reason: /not valid JSON/ }],
        [{ planId: 'nope' }, 400, { error: 'invalid_request', reason: /planId/ }],
        [{}, 400, { error: 'invalid_request', reason: /planId is required/ }],
        [[credit.id], 400, { error: 'invalid_request', reason: /JSON object/ }],
        [{ planId: credit.id, amountUsd: 5 }, 400, { error: 'invalid_request', reason: /amountUsd/ }],
        [{ planId: credit.id, amountUsd: '5\u0000' }, 400, { error: 'invalid_request', reason: /NUL/ }],
        [`${'['.repeat(40)}${']'.repeat(40)}`, 400, { error: 'invalid_request', reason: /JSON object|nests deeper/ }],
        [{ planId: credit.id, amountUsd: '9'.repeat(41) }, 400, { error: 'invalid_request', reason: /too long/ }],
        [{ planId: credit.id, extra: true }, 400, { error: 'invalid_request' }],
        [{ planId: 'pln_000000000000000000000000' }, 404, { error: 'plan_not_found' }],
        [{ planId: payg.planId }, 400, { error: 'payg_not_purchasable' }],
        [{ planId: credit.id }, 400, { error: 'amount_required' }],
        [{ planId: credit.id, amountUsd: '-5' }, 400, { error: 'invalid_request', reason: /amountUsd/ }],
        [{ planId: credit.id, amountUsd: '10.001' }, 400, { error: 'amount_not_cent_increment' }],
        [{ planId: credit.id, amountUsd: '4.99' }, 400, { error: 'amount_below_minimum', minimumPurchaseUsd: '5.000000' }],
      ];
      for (const [body, status, expected] of cases) {
        const res = await answer(await extend(body));
        t.equal(res.status, status, JSON.stringify(body));
        t.match(res.body, expected);
      }
      t.match(
        await answer(await extend({ planId: credit.id, amountUsd: '5.00' })),
        { status: 503, body: { error: 'service_unavailable', reason: /Payments are not configured/ } },
        'a purchase that passes every refusal, on a hub that takes no payments',
      );
      t.match(await answer(await hub.pay('acme', '/purchases/receipt', { headers: { authorization: `Bearer ${agent.token}` } })), {
        status: 200,
        body: { purchases: [] },
      });
    });

    await t.test('?accessId= must name an account the agent holds here', async (t) => {
      const extendAt = (query: string) =>
        hub.pay('acme', `/extend${query}`, {
          method: 'POST',
          body: JSON.stringify({ amountUsd: '5.00' }),
          headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}` },
        });
      t.match(await answer(await extendAt('?accessId=nope')), { status: 400, body: { error: 'invalid_request', reason: /accessId/ } });
      t.match(await answer(await extendAt('?accessId=hubacc_000000000000000000000000&accessId=hubacc_000000000000000000000001')), {
        status: 400,
        body: { error: 'invalid_request' },
      });
      t.match(await answer(await extendAt('?accessId=hubacc_000000000000000000000000')), {
        status: 404,
        body: { error: 'access_not_found' },
      });
    });

    await t.test('key redeem is not built yet', async (t) => {
      t.match(
        await answer(await hub.pay('acme', '/keys/redeem', { method: 'POST', headers: { authorization: `Bearer ${agent.token}` } })),
        { status: 501, body: { error: 'entitlements_not_available' } },
      );
    });

    t.equal(upstream.seen.length, before, 'nothing reached the seller');
  });
}
