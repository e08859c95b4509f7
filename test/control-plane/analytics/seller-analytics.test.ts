import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { evm, Mppx } from 'mppx/client';
import t from 'tap';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { registerAgent } from '../../helpers/agents.js';
import { testProviders } from '../../helpers/database.js';
import { managementClient } from '../../helpers/management.js';
import { startPaidWorld } from '../../helpers/paid-world.js';

// GET /v1/analytics/sellers/{sellerId} (spec: Seller analytics record, Transaction) against a
// fixture made only through hub's own flows: paid calls with the unmodified x402 and mppx
// clients, a challenge left unpaid, a paid call the seller fails, an identity proof, and a plan
// bought at /extend. Every figure is checked against the count made by hand below.

type Json = Record<string, any>;

for (const provider of testProviders()) {
  t.test(`seller analytics on ${provider}`, async (t) => {
    const world = await startPaidWorld(t, provider);
    const { hub, chain, payerKey, url, sellerId, db } = world;
    const api = managementClient(hub.cp.url);
    const analytics = async (query = '') => {
      await hub.proxy.services.recorder.drain();
      return api.get(`/v1/analytics/sellers/${sellerId}${query}`, hub.apiKey);
    };

    const empty = await analytics();
    t.equal(empty.status, 200);
    t.same(empty.body, {
      analytics: {
        days: 30,
        calls: 0,
        transactions: 0,
        revenueUsd: '0.000000',
        newWallets: 0,
        attempts: 0,
        successRate: 0,
        recentTransactions: [],
        sessionRevenue: { chargedUsd: '0.000000', unclaimedUsd: '0.000000', claimedUsd: '0.000000', settledUsd: '0.000000' },
      },
    });

    // Wallet A pays twice with x402; wallet B once with MPP.
    const walletA = privateKeyToAccount(payerKey);
    const walletB = privateKeyToAccount(chain.accounts[4]!.privateKey as Hex);
    const x402 = new x402Client();
    registerExactEvmScheme(x402, { signer: walletA });
    x402.setSpendControls({ allowedAssets: true });
    const x402Fetch = wrapFetchWithPayment(fetch, x402);
    const mppx = Mppx.create({
      methods: [evm({ account: walletB, authorization: { name: chain.token.name, version: chain.token.version } })],
      polyfill: false,
    });
    for (const q of ['one', 'two']) t.equal((await x402Fetch(url(`/search?q=${q}`))).status, 200);
    t.equal((await mppx.fetch(url('/search?q=mpp'))).status, 200);
    // A challenge nobody pays, a paid call the seller answers 500 (delivered, nothing charged),
    // and an identity proof (no money: not a payment attempt).
    t.equal((await fetch(url('/search?q=unpaid'))).status, 402);
    t.equal((await x402Fetch(url('/broken'))).status, 500);
    t.equal((await x402Fetch(url('/identity'))).status, 200);
    // A registered agent buys $1.00 of credit with wallet A.
    await world.offerPlan({ name: 'Credits', slug: 'credits', billingMode: 'credit', minimumPurchaseUsd: '1.00' });
    const plan = await db.plan.findFirstOrThrow({ where: { slug: 'credits' } });
    const agent = await registerAgent(hub, 'acme');
    const bought = await x402Fetch(url('/extend'), {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ planId: plan.id, amountUsd: '1.00' }),
    });
    t.equal(bought.status, 201);

    // By hand: attempts = 3 paid calls + 1 unpaid + 1 failed call + 1 purchase = 6 (the identity
    // proof is none); transactions = 3 calls + 1 purchase; revenue = 3 × $0.01 + $1.00; calls =
    // the 3 paid calls, the 500 and the identity-proven call (the purchase is not a call); new
    // wallets = A and B.
    await t.test('each figure as counted by hand', async (t) => {
      const res = await analytics('?days=1');
      t.equal(res.status, 200);
      const a = res.body.analytics as Json;
      t.match(a, { days: 1, calls: 5, attempts: 6, transactions: 4, revenueUsd: '1.030000', newWallets: 2, successRate: 0.6667 });
      t.same(Object.keys(a).sort(), [
        'attempts',
        'calls',
        'days',
        'newWallets',
        'recentTransactions',
        'revenueUsd',
        'sessionRevenue',
        'successRate',
        'transactions',
      ]);
      t.same((await analytics('?days=365&timeZone=Pacific/Kiritimati')).body.analytics.revenueUsd, '1.030000', 'a year holds the same');
    });

    await t.test(
      'recent transactions: newest first, every kind, status and method, with their seller, service, plan and agent',
      async (t) => {
        const list = (await analytics('?days=7&timeZone=America/New_York')).body.analytics.recentTransactions as Json[];
        t.equal(list.length, 6);
        t.same(
          list.map((x) => [x.kind, x.status, x.paymentMethod, x.protocol, x.amountUsd]),
          [
            ['purchase', 'settled', 'x402_wallet', 'x402', '1.000000'],
            ['call', 'released', 'x402_wallet', 'x402', '0.010000'],
            ['call', 'challenge_created', 'x402_wallet', 'x402', '0.010000'],
            ['call', 'settled', 'mpp_wallet', 'mpp', '0.010000'],
            ['call', 'settled', 'x402_wallet', 'x402', '0.010000'],
            ['call', 'settled', 'x402_wallet', 'x402', '0.010000'],
          ],
        );
        const seller = { id: sellerId, name: 'acme', slug: 'acme' };
        const service = { id: world.ids.service, name: String, slug: 'search' };
        t.match(list[0], {
          id: /^apay_/,
          network: chain.network,
          createdAt: /Z$/,
          verifiedAt: /Z$/,
          seller,
          service,
          plan: { id: plan.id, name: 'Credits' },
          agent: { id: agent.agentId, walletAddress: agent.walletAddress },
        });
        t.match(list[3], { agent: { walletAddress: walletB.address.toLowerCase() }, plan: { id: world.ids.plan } });
        t.match(list[2], { verifiedAt: null, agent: null }, 'an unpaid anonymous challenge names no agent yet');
        t.same(list[0]?.seller, seller);
      },
    );

    await t.test('the query parameters: defaults, bounds and bad values', async (t) => {
      for (const query of [
        '?days=0',
        '?days=366',
        '?days=1.5',
        '?days=abc',
        '?timeZone=',
        '?timeZone=Mars/Olympus',
        `?timeZone=${'A'.repeat(65)}`,
      ]) {
        const res = await analytics(query);
        t.equal(res.status, 400, query);
        t.type(res.body.error, 'string', query);
      }
      t.equal((await analytics('?days=365&timeZone=Asia/Kathmandu')).status, 200);
      t.equal((await analytics('?days=1&timeZone=UTC')).body.analytics.days, 1);
    });

    // Credentials and other organizations' sellers: test/control-plane/rest/route-groups.test.ts.
    await t.test('an unknown seller is 404', async (t) => {
      const missing = await api.get(`/v1/analytics/sellers/sel_${'x'.repeat(24)}`, hub.apiKey);
      t.equal(missing.status, 404);
      t.same(missing.body, { error: 'seller_not_found' });
    });
  });
}
