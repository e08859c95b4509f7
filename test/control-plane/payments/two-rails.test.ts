import { createServer } from 'node:http';
import { join } from 'node:path';
import t from 'tap';
import type { Address, Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { writeDeploymentFile } from '../../../chain/deployment.js';
import type { LocalChain } from '../../../chain/local-chain.js';
import { discoveryCatalog } from '../../../control-plane/discovery/catalog.js';
import type { HttpFacilitator } from '../../../control-plane/facilitator/http-facilitator.js';
import { type PaymentRails, resolvePaymentRails } from '../../../control-plane/payments/rails.js';
import { closeServer, listen } from '../../../runtime/http-server.js';
import { withHubSignature } from '../../../sdk/node.js';
import { paymentRequiredBody } from '../../../sdk/payment-required.js';
import type { HubConfig } from '../../../shared/config.js';
import { decodeHeaderJson, encodeHeaderJson, X402_HEADERS } from '../../../shared/payments/x402-headers.js';
import type { PaymentPayload, PaymentRequirements } from '../../../shared/payments/x402-wire.js';
import { seedPricedService } from '../../helpers/catalog-seed.js';
import { startTestChain, tokenBalance } from '../../helpers/chain.js';
import { testProviders } from '../../helpers/database.js';
import { startX402FacilitatorServer } from '../../helpers/facilitator-server.js';
import { startTestHub } from '../../helpers/hub.js';
import { managementClient } from '../../helpers/management.js';
import { tempDataDir } from '../../helpers/processes.js';
import { signPayment } from '../../helpers/sign-payment.js';

// One deployment, two rails (docs/decisions.md#D-313): the live rail a remote facilitator (x402's
// own, over HTTP) on one chain, the test rail the local chain of HUB_CHAIN_FILE on another. A live
// seller is paid on the live rail, a sandbox seller (its calls, its purchases, its test agents'
// wallets) on the test rail; a sandbox payment unlocks nothing at the live seller; and each
// attempt is paid on the rail it was made on, whichever a fresh challenge would use now.

t.setTimeout(120_000);

const [liveChain, testChain] = await Promise.all([startTestChain(t, { chainId: 31_338 }), startTestChain(t)]);
const { dataDir } = tempDataDir(t);
const chainFile = join(dataDir, 'chain.json');
await writeDeploymentFile(chainFile, testChain);
const env = {
  HUB_FACILITATOR_URL: await startX402FacilitatorServer(t, liveChain),
  HUB_PAYMENT_NETWORK: liveChain.network,
  HUB_PAYMENT_TOKEN_ADDRESS: liveChain.token.address,
  HUB_PAYMENT_TOKEN_NAME: liveChain.token.name,
  HUB_PAYMENT_TOKEN_VERSION: liveChain.token.version,
  HUB_PAYMENT_RPC_URL: liveChain.rpcUrl,
  HUB_CHAIN_FILE: chainFile,
};

/** The rails as the settings above configure them, their remote facilitator closed at the end. */
async function configuredRails(): Promise<Required<PaymentRails>> {
  const { live, test } = await resolvePaymentRails({ chainFile } as HubConfig, env);
  if (!live || !test) throw new Error('two rails were configured');
  t.teardown(() => (live.facilitator as HttpFacilitator).close());
  return { live, test };
}

const payTo = testChain.accounts[2]!.address;
const payerKey = testChain.accounts[3]!.privateKey as Hex;
const payer = privateKeyToAccount(payerKey).address;
/** The same dev accounts hold tokens on both chains: what moved, on each. */
const balances = async (owner: Address) => ({ live: await tokenBalance(liveChain, owner), test: await tokenBalance(testChain, owner) });
const chainOf = (network: string): LocalChain => (network === liveChain.network ? liveChain : testChain);

for (const provider of testProviders()) {
  t.test(provider, async (t) => {
    const rails = await configuredRails();
    t.match(rails, { live: { network: liveChain.network, test: false }, test: { network: testChain.network, test: true } });
    const hub = await startTestHub(t, provider, {}, { ...rails });
    hub.cp.config.proxy.port = Number(new URL(hub.proxyUrl).port);
    const api = managementClient(hub.cp.url);
    const key = hub.apiKey;

    // The seller's API: asks payment the first time it sees a request, serves its paid retry.
    const secrets = new Map<string, string>();
    const served: { sandbox: boolean; path: string }[] = [];
    const challenged = new Set<string>();
    const handler = withHubSignature(
      async (req, res, { identity }) => {
        if (!challenged.has(identity.requestId)) {
          challenged.add(identity.requestId);
          res.writeHead(402, { 'content-type': 'application/json' });
          return res.end(JSON.stringify(paymentRequiredBody({ serviceSlug: 'search', usage: [{ meterSlug: 'calls', quantity: 1 }] })));
        }
        served.push({ sandbox: identity.sandbox, path: req.url ?? '' });
        res.writeHead(200, {
          'content-type': 'application/json',
          'hub-usage': JSON.stringify([{ serviceSlug: 'search', meterSlug: 'calls', quantity: 1 }]),
        });
        res.end('{"results":["a"]}');
      },
      { secrets: (kid) => secrets.get(kid) },
    );
    const upstream = createServer((req, res) => void handler(req, res));
    const upstreamUrl = `http://127.0.0.1:${await listen(upstream, 0, '127.0.0.1')}`;
    t.teardown(() => closeServer(upstream, 200));

    /** Made through the management API: what the seller does. */
    const made = async (path: string, body: Record<string, unknown>) => {
      const reply = await api.post(path, key, body);
      if (reply.status !== 201) throw new Error(`${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
      return reply.body;
    };
    const newSeller = async (slug: string, sandbox: boolean) => {
      const { id, kid, secret } = await hub.seller({ slug, upstreamBaseUrl: upstreamUrl, payToAddress: payTo, sandbox });
      secrets.set(kid, secret);
      return { id, ...(await seedPricedService(hub.cp.db, { organizationId: hub.organizationId, sellerId: id, priceMicros: 10_000n })) };
    };
    const live = await newSeller('shop', false);
    const sandbox = await newSeller('shop-test', true);

    /** A call's 402 at `slug`'s pay URL: the x402 requirements it offers. */
    const challenge = async (slug: string, path: string): Promise<PaymentRequirements> => {
      const res = await hub.pay(slug, path);
      const body = (await res.json()) as { accepts: PaymentRequirements[] };
      if (res.status !== 402) throw new Error(`${slug}${path} answered ${res.status} ${JSON.stringify(body)}`);
      return body.accepts[0]!;
    };
    const paidRetry = (slug: string, path: string, payment: PaymentPayload) =>
      hub.pay(slug, path, { headers: { [X402_HEADERS.signature]: encodeHeaderJson(payment) } });
    /** A call at `slug` paid by the payer's own wallet, signed on the chain its challenge names. */
    const paidCall = async (slug: string, path: string) => {
      const requirements = await challenge(slug, path);
      const res = await paidRetry(slug, path, await signPayment(chainOf(requirements.network), payerKey, requirements));
      return { requirements, res };
    };
    const attempt = (id: string) => hub.cp.db.paymentAttempt.findUniqueOrThrow({ where: { id } });

    await t.test("a live seller's call pays on the live rail", async (t) => {
      const before = await balances(payer);
      const { requirements, res } = await paidCall('shop', '/search?q=live');
      t.equal(requirements.network, liveChain.network, 'challenged on the live network');
      t.equal(res.status, 200);
      t.match(decodeHeaderJson(res.headers.get(X402_HEADERS.response) ?? ''), { success: true, network: liveChain.network });
      t.same(await balances(payer), { live: before.live - 10_000n, test: before.test }, 'paid on the live chain only');
      t.match(await attempt(requirements.extra.paymentId as string), {
        status: 'settled',
        rail: 'usdc',
        network: liveChain.network,
        sellerId: live.id,
      });
    });

    await t.test("a sandbox seller's calls, purchases and test agents are on the test rail", async (t) => {
      const before = await balances(payer);
      const { requirements, res } = await paidCall('shop-test', '/search?q=sandbox');
      t.equal(requirements.network, testChain.network, 'challenged on the test network');
      t.equal(res.status, 200);
      t.same(await balances(payer), { live: before.live, test: before.test - 10_000n }, 'paid on the test chain only');
      t.match(await attempt(requirements.extra.paymentId as string), { status: 'settled', rail: 'local_husd', network: testChain.network });

      // The sandbox drives: a test agent funded from the test rail's faucet calls and buys.
      const { plan: monthly } = await made('/v1/plans', {
        serviceId: sandbox.serviceId,
        name: 'Monthly',
        slug: 'monthly',
        billingMode: 'subscription',
        basePriceUsd: '1.00',
      });
      await made('/v1/plan-meter-prices', { planId: monthly.id, meterId: sandbox.meterId, priceUsd: '0' });
      await hub.cp.db.seller.update({ where: { id: sandbox.id }, data: { salesEnabled: true } });
      const { testAgent } = await made('/v1/sandbox/agents', { sellerId: sandbox.id, fundUsd: '2.00' });
      const wallet = testAgent.walletAddress as Address;
      t.same(await balances(wallet), { live: 0n, test: 2_000_000n }, 'funded on the test chain');
      const called = (await api.post('/v1/sandbox/calls', key, { agentId: testAgent.agentId, path: '/search?q=agent' })).body.exchange;
      t.match(called, { status: 200, paid: { network: testChain.network, amount: '10000' } });
      const bought = (await api.post('/v1/sandbox/purchases', key, { agentId: testAgent.agentId, planId: monthly.id })).body.exchange;
      t.match(bought, { status: 201, paid: { network: testChain.network, amount: '1000000' } });
      t.match(await attempt(bought.paid.paymentId), { kind: 'purchase', status: 'settled', network: testChain.network });
      t.same(await balances(wallet), { live: 0n, test: 2_000_000n - 10_000n - 1_000_000n }, 'both paid on the test chain');
      // What the discovery documents offer agents: each seller's own rail.
      const offered = async (sellerId: string) => (await discoveryCatalog(hub.cp.db, hub.cp.rails, sellerId))?.payment?.network;
      t.same([await offered(live.id), await offered(sandbox.id)], [liveChain.network, testChain.network], 'each documents its own rail');
    });

    await t.test('a sandbox payment replayed at the live seller is refused and unlocks nothing', async (t) => {
      const before = await balances(payer);
      const servedBefore = served.length;
      const requirements = await challenge('shop-test', '/search?q=replay');
      const payment = await signPayment(testChain, payerKey, requirements);
      // The same request at the live pay URL, paid with the sandbox seller's open challenge.
      const replayed = await paidRetry('shop', '/search?q=replay', payment);
      t.equal(replayed.status, 409);
      t.match(await replayed.json(), { error: 'payment_request_mismatch', reason: /challenged at another pay URL/ });
      // Pointed at a live challenge instead: signed for the test chain, it does not verify on the live rail.
      const liveRequirements = await challenge('shop', '/search?q=replay');
      const repointed = await paidRetry('shop', '/search?q=replay', { ...payment, accepted: liveRequirements });
      t.equal(repointed.status, 402);
      t.match(await repointed.json(), { error: 'payment_required', reason: 'settlement_failed' });
      t.equal(served.length, servedBefore, 'the live seller served nothing');
      t.same(await balances(payer), before, 'nothing moved on either chain');
      t.match(await attempt(liveRequirements.extra.paymentId as string), { status: 'challenge_created', payer: null });
      // Where it was challenged, the payment is still good.
      const paid = await paidRetry('shop-test', '/search?q=replay', payment);
      t.equal(paid.status, 200);
      t.same(served.at(-1), { sandbox: true, path: '/search?q=replay' });
    });

    await t.test("the live seller's analytics and accounts show nothing of the sandbox traffic", async (t) => {
      const analytics = (await api.get(`/v1/analytics/sellers/${live.id}?days=7&timeZone=UTC`, key)).body.analytics;
      t.match(analytics, { transactions: 1, revenueUsd: '0.010000' }, 'its one paid call');
      t.same(
        analytics.recentTransactions
          .filter((tx: { status: string }) => tx.status === 'settled')
          .map((tx: { amountUsd: string }) => tx.amountUsd),
        ['0.010000'],
      );
      t.same((await api.get(`/v1/accounts?sellerId=${live.id}`, key)).body.accounts, [], 'no live account');
      const sandboxed = (await api.get(`/v1/analytics/sellers/${sandbox.id}?days=7&timeZone=UTC`, key)).body.analytics;
      t.equal(sandboxed.transactions, 4, 'the sandbox seller has its own: three calls and a purchase');
      const settled = await hub.cp.db.paymentAttempt.findMany({ where: { status: 'settled' }, select: { sellerId: true, network: true } });
      for (const { sellerId, network } of settled) t.equal(network, sellerId === live.id ? liveChain.network : testChain.network);
    });

    await t.test('an attempt is paid on the rail it was made on, whichever a fresh challenge would use', async (t) => {
      // Made while the local chain was the deployment's one rail (as in development): a live seller's attempt on it.
      hub.cp.rails.live = rails.test;
      hub.cp.rails.test = undefined;
      const earlier = await challenge('shop', '/search?q=earlier');
      t.equal(earlier.network, testChain.network);
      // The deployment now has its live rail, and the local chain beside it.
      Object.assign(hub.cp.rails, rails);
      t.equal((await challenge('shop', '/search?q=fresh')).network, liveChain.network, 'a fresh challenge is on the live rail');
      const before = await balances(payer);
      const res = await paidRetry('shop', '/search?q=earlier', await signPayment(testChain, payerKey, earlier));
      t.equal(res.status, 200);
      t.match(decodeHeaderJson(res.headers.get(X402_HEADERS.response) ?? ''), { network: testChain.network });
      t.same(await balances(payer), { live: before.live, test: before.test - 10_000n }, 'settled on the chain it was made on');
      t.match(await attempt(earlier.extra.paymentId as string), { status: 'settled', network: testChain.network });
    });

    await t.test('an attempt whose rail is gone is paid on no other', async (t) => {
      const open = await challenge('shop-test', '/search?q=gone');
      hub.cp.rails.test = undefined;
      try {
        const before = await balances(payer);
        const res = await paidRetry('shop-test', '/search?q=gone', await signPayment(testChain, payerKey, open));
        t.equal(res.status, 402);
        t.match(await res.json(), { error: 'payment_required', reason: 'settlement_failed', settlementReason: 'rail_not_configured' });
        t.same(await balances(payer), before, 'nothing moved');
        const fresh = await hub.pay('shop-test', '/search?q=gone');
        t.equal(fresh.status, 503, 'a sandbox seller is not challenged on the live rail');
        t.match(await fresh.json(), { error: 'service_unavailable', reason: /sandbox/ });
      } finally {
        hub.cp.rails.test = rails.test;
      }
    });

    await t.test('/readyz says both rails', async (t) => {
      const readyz = await (await fetch(`${hub.cp.url}/readyz`)).json();
      t.same(readyz, { status: 'ready', payments: 'available', testRail: { payments: 'available' } });
      t.same(await (await fetch(`${hub.proxyUrl}/readyz`)).json(), readyz, 'the proxy says the same');
    });
  });
}
