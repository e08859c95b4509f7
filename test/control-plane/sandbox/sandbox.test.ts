import { createServer, type ServerResponse } from 'node:http';
import t from 'tap';
import type { Address } from 'viem';
import { localRail } from '../../../control-plane/payments/rail.js';
import { refuseLiveRailForSandbox } from '../../../control-plane/payments/test-rail.js';
import { closeServer, listen } from '../../../runtime/http-server.js';
import { withHubSignature } from '../../../sdk/node.js';
import { paymentRequiredBody } from '../../../sdk/payment-required.js';
import { createUsageClient } from '../../../sdk/usage-client.js';
import { startTestChain, tokenBalance } from '../../helpers/chain.js';
import { testProviders } from '../../helpers/database.js';
import { startTestHub } from '../../helpers/hub.js';
import { managementClient } from '../../helpers/management.js';
import { eventually } from '../../helpers/processes.js';

// Issue 35, the sandbox half: a seller builds its catalog in sandbox through the management API,
// a test agent made by /v1/sandbox pays and buys there, the seller's API sees `hub-sandbox: 1`
// and `,sb=1` (spec: Headers on proxied requests; Request signature), the test clock expires an
// account and a renewal extends it, and the live seller's analytics and accounts see none of it.

const DAY = 86_400;
const FLOOD_BYTES = 64 * 1024 * 1024;

/** An answer far bigger than a drive shows: written until the reader goes away, or 64 MiB. */
async function pour(res: ServerResponse, flood: { written: number; closed: boolean }) {
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.once('close', () => {
    flood.closed = true;
  });
  const chunk = Buffer.alloc(65_536, 'x');
  while (!res.destroyed && flood.written < FLOOD_BYTES) {
    flood.written += chunk.length;
    if (!res.write(chunk)) await new Promise((drained) => res.once('drain', drained).once('close', drained));
  }
  res.end();
}

t.test('a sandbox seller is paid on a test rail only', async (t) => {
  const rail = { test: false } as Parameters<typeof refuseLiveRailForSandbox>[0];
  t.throws(() => refuseLiveRailForSandbox(rail, { sandbox: true }), { code: 'service_unavailable' });
  t.doesNotThrow(() => refuseLiveRailForSandbox(rail, { sandbox: false }));
  t.doesNotThrow(() => refuseLiveRailForSandbox({ ...rail, test: true }, { sandbox: true }));
});

t.test('sandbox, end to end', async (t) => {
  const chain = await startTestChain(t);
  for (const provider of testProviders()) {
    await t.test(provider, async (t) => {
      const rail = localRail(chain);
      const hub = await startTestHub(t, provider, {}, rail);
      // The control-plane drives the pay URL through its proxy, on the port the proxy listens on.
      hub.cp.config.proxy.port = Number(new URL(hub.proxyUrl).port);
      const api = managementClient(hub.cp.url);
      const key = hub.apiKey;

      // The seller's API: asks hub's usage check, serves what it allows, asks payment otherwise.
      const secrets = new Map<string, string>();
      const seen: { sandbox: string | undefined; signature: string; identitySandbox: boolean; reason: string | null }[] = [];
      const usage = createUsageClient({ baseUrl: hub.cp.url, apiKey: key });
      const handler = withHubSignature(
        async (req, res, { identity }) => {
          const check = await usage.check({
            zcRequestId: identity.requestId,
            serviceSlug: 'search',
            usage: [{ meterSlug: 'calls', quantity: 1 }],
          });
          seen.push({
            sandbox: req.headers['hub-sandbox'] as string | undefined,
            signature: String(req.headers['hub-signature']),
            identitySandbox: identity.sandbox,
            reason: check.reason,
          });
          if (!check.allowed) {
            res.writeHead(402, { 'content-type': 'application/json' });
            return res.end(JSON.stringify(paymentRequiredBody({ serviceSlug: 'search', usage: [{ meterSlug: 'calls', quantity: 1 }] })));
          }
          res.writeHead(200, {
            'content-type': 'application/json',
            'hub-usage': JSON.stringify([{ serviceSlug: 'search', meterSlug: 'calls', quantity: 1 }]),
          });
          res.end('{"results":["a"]}');
        },
        { secrets: (kid) => secrets.get(kid) },
      );
      const flood = { written: 0, closed: false };
      const upstream = createServer((req, res) => void (req.url === '/flood' ? pour(res, flood) : handler(req, res)));
      const upstreamUrl = `http://127.0.0.1:${await listen(upstream, 0, '127.0.0.1')}`;
      t.teardown(() => closeServer(upstream, 200));
      const payTo = chain.accounts[2]!.address;

      const made = async (path: string, body: Record<string, unknown>) => {
        const reply = await api.post(path, key, body);
        t.equal(reply.status, 201, `${path}: ${JSON.stringify(reply.body)}`);
        return reply.body;
      };
      const newSeller = async (slug: string, sandbox: boolean) => {
        const { seller } = await made('/v1/sellers', { name: slug, slug, upstreamBaseUrl: upstreamUrl, payToAddress: payTo, sandbox });
        const { signingSecret, secret } = await made(`/v1/sellers/${seller.id}/signing-secrets`, {});
        secrets.set(signingSecret.id, secret);
        return seller;
      };
      const live = await newSeller('shop', false);
      const sandbox = await newSeller('shop-test', true);
      t.match([live.sandbox, sandbox.sandbox], [false, true], 'the seller says which it is');
      t.not(sandbox.payHost, live.payHost, 'its pay URL is its own');
      const changed = await api.patch(`/v1/sellers/${sandbox.id}`, key, { sandbox: false });
      t.equal(changed.status, 400, 'sandbox is set at creation and never changed');

      // The catalog, built in sandbox through the ordinary catalog routes.
      const { service } = await made('/v1/services', { sellerId: sandbox.id, name: 'Search', slug: 'search' });
      const { meter } = await made('/v1/meters', { serviceId: service.id, key: 'calls', unit: 'call' });
      const { plan: payg } = await made('/v1/plans', { serviceId: service.id, name: 'Per call', slug: 'payg', billingMode: 'payg' });
      await made('/v1/plan-meter-prices', { planId: payg.id, meterId: meter.id, priceUsd: '0.01' });
      const { plan: monthly } = await made('/v1/plans', {
        serviceId: service.id,
        name: 'Monthly',
        slug: 'monthly',
        billingMode: 'subscription',
        basePriceUsd: '1.00',
      });
      await made('/v1/plan-meter-prices', { planId: monthly.id, meterId: meter.id, priceUsd: '0' });
      await hub.cp.db.seller.update({ where: { id: sandbox.id }, data: { salesEnabled: true } }); // the operator's switch (hub seller)

      await t.test('the sandbox routes act on sandbox sellers only, and check their bodies', async (t) => {
        const refused = await api.post('/v1/sandbox/agents', key, { sellerId: live.id });
        t.match(refused, { status: 409, body: { error: 'seller_not_in_sandbox' } });
        t.match(await api.get(`/v1/sandbox/agents?sellerId=${live.id}`, key), { status: 409, body: { error: 'seller_not_in_sandbox' } });
        const badFund = await api.post('/v1/sandbox/agents', key, { sellerId: sandbox.id, fundUsd: 'lots' });
        t.equal(badFund.status, 400);
        t.type(badFund.body.error, 'string');
        t.equal((await api.post('/v1/sandbox/agents', key, { sellerId: sandbox.id, fundUsd: '5000' })).status, 400, 'at most $1,000');
        t.equal((await api.post('/v1/sandbox/calls', key, { agentId: 'agt_x', path: '/search' })).status, 400);
      });

      const { testAgent } = await made('/v1/sandbox/agents', { sellerId: sandbox.id, fundUsd: '5.00' });
      t.match(testAgent, { sellerId: sandbox.id, fundedUsd: '5.000000', token: /^\S+$/ });
      t.equal(await tokenBalance(chain, testAgent.walletAddress as Address), 5_000_000n, 'its wallet holds test tokens');
      const listed = await api.get(`/v1/sandbox/agents?sellerId=${sandbox.id}`, key);
      t.same(
        listed.body.testAgents.map((a: { agentId: string }) => a.agentId),
        [testAgent.agentId],
        'listed, without its token',
      );
      t.notOk(listed.body.testAgents[0].token);

      let callPaymentId = '';
      await t.test('a paid call as the test agent reaches the seller as sandbox traffic', async (t) => {
        const { body } = await api.post('/v1/sandbox/calls', key, { agentId: testAgent.agentId, path: '/search?q=x' });
        t.match(body.exchange, {
          status: 200,
          paid: { paymentId: /^apay_/, network: chain.network, amount: '10000' },
          body: '{"results":["a"]}',
        });
        callPaymentId = body.exchange.paid.paymentId;
        t.match(JSON.parse(body.exchange.headers['hub-billing']), { status: 'settled', chargedUsd: '0.010000' });
        t.ok(seen.length >= 2);
        for (const s of seen) {
          t.equal(s.sandbox, '1', 'hub-sandbox: 1');
          t.match(s.signature, /,sb=1$/, 'the signature ends ,sb=1');
          t.equal(s.identitySandbox, true, 'the SDK flags it');
        }
        t.equal(await tokenBalance(chain, testAgent.walletAddress as Address), 4_990_000n, 'paid on the test rail');
      });

      await t.test("a drive reads no more of the seller's answer than it shows", async (t) => {
        const { status, body } = await api.post('/v1/sandbox/calls', key, { agentId: testAgent.agentId, path: '/flood' });
        t.equal(status, 200);
        t.equal(body.exchange.body, 'x'.repeat(16_384), 'the first 16 KiB');
        t.ok(await eventually(() => flood.closed), 'the answer was broken off');
        t.ok(flood.written < FLOOD_BYTES / 4, `the seller wrote ${flood.written} bytes before it was`);
      });

      await t.test('a pay URL that cannot be reached is the envelope, never a 500', async (t) => {
        const port = hub.cp.config.proxy.port;
        const closed = createServer();
        hub.cp.config.proxy.port = await listen(closed, 0, '127.0.0.1');
        await closeServer(closed, 200);
        try {
          const refused = await api.post('/v1/sandbox/calls', key, { agentId: testAgent.agentId, path: '/search' });
          t.equal(refused.status, 502);
          t.equal(refused.body.error, 'upstream_error');
          t.match(refused.body.reason, /ECONNREFUSED/);
        } finally {
          hub.cp.config.proxy.port = port;
        }
      });

      let accessId = '';
      const purchases: string[] = [];
      await t.test('a purchase, then the test clock expires the account and a renewal extends it', async (t) => {
        const bought = await api.post('/v1/sandbox/purchases', key, { agentId: testAgent.agentId, planId: monthly.id });
        t.equal(bought.body.exchange.status, 201, bought.body.exchange.body);
        const account = JSON.parse(bought.body.exchange.body).account;
        accessId = account.accessId;
        t.match(bought.body.exchange.paid, { amount: '1000000' });
        purchases.push(bought.body.exchange.paid.paymentId);

        const covered = await api.post('/v1/sandbox/calls', key, { agentId: testAgent.agentId, path: '/search' });
        t.match(covered.body.exchange, { status: 200, paid: null }, 'the plan covers the call');

        const moved = await api.post(`/v1/sandbox/accounts/${accessId}/clock`, key, { advanceSeconds: 32 * DAY });
        t.equal(moved.status, 200);
        t.ok(Date.parse(moved.body.account.periodEnd) < Date.now(), 'its period is over');
        t.ok(moved.body.account.stateVersion > 1, 'the change raised the version');
        seen.length = 0;
        const expired = await api.post('/v1/sandbox/calls', key, { agentId: testAgent.agentId, path: '/search' });
        t.equal(seen[0]?.reason, 'plan_expired', "the seller's usage check says the plan expired");
        t.not(expired.body.exchange.paid, null, 'the call is paid per call again');

        const renewed = await api.post('/v1/sandbox/purchases', key, { agentId: testAgent.agentId, accessId });
        t.equal(renewed.body.exchange.status, 201, renewed.body.exchange.body);
        purchases.push(renewed.body.exchange.paid.paymentId);
        t.ok(Date.parse(JSON.parse(renewed.body.exchange.body).account.period.end) > Date.now() + 27 * DAY, 'a new period from now');
        const again = await api.post('/v1/sandbox/calls', key, { agentId: testAgent.agentId, path: '/search' });
        t.match(again.body.exchange, { status: 200, paid: null }, 'the renewed plan covers the call');

        t.match(await api.post(`/v1/sandbox/accounts/${accessId}/clock`, key, { advanceSeconds: 0 }), { status: 400 });
      });

      await t.test('refunds and disputes reverse the credit of the account a payment bought', async (t) => {
        const [purchase, renewal] = purchases as [string, string];
        const reversed = async () =>
          (await api.get(`/v1/accounts?sellerId=${sandbox.id}`, key)).body.accounts.find(
            (a: { accessId: string }) => a.accessId === accessId,
          ).creditReversedUsd;
        const refund = (paymentId: string, body: Record<string, unknown> = {}) =>
          api.post(`/v1/sandbox/payments/${paymentId}/refund`, key, body);
        const dispute = (paymentId: string, status: string) => api.post(`/v1/sandbox/payments/${paymentId}/dispute`, key, { status });

        t.match(await refund(callPaymentId), { status: 409, body: { error: 'refund_not_available', reason: /bought no account/ } });
        t.match(await refund('apay_AAAAAAAAAAAAAAAAAAAAAAAA'), { status: 404, body: { error: 'payment_not_found' } });
        t.match(await refund(renewal, { amountUsd: '1.5' }), {
          status: 400,
          body: { error: 'invalid_request', reason: /at most 1\.000000/ },
        });
        t.match(await refund(renewal, { amountUsd: -1 }), { status: 400 });
        t.match(await dispute(renewal, 'lost'), { status: 409, body: { error: 'refund_not_available', reason: /open one first/ } });
        t.match(await dispute(renewal, 'pending'), { status: 400 });
        t.equal(await reversed(), '0.000000', 'nothing reversed by a refusal');

        const partial = await refund(renewal, { amountUsd: '0.25' });
        t.match(partial, {
          status: 200,
          body: { payment: { paymentId: renewal, accessId, refundedUsd: '0.250000', creditReversedUsd: '0.250000' } },
        });
        const opened = await dispute(renewal, 'open');
        t.match(opened.body.payment, { disputeStatus: 'open', creditReversedUsd: '0.250000' }, 'an open dispute takes nothing yet');
        t.match(await dispute(renewal, 'open'), { status: 409, body: { error: 'refund_not_available' } });
        const lost = await dispute(renewal, 'lost');
        t.match(
          lost.body.payment,
          { disputeStatus: 'lost', disputeLostUsd: '0.750000', creditReversedUsd: '1.000000' },
          'what the refund left',
        );
        t.match(await refund(renewal), { status: 409, body: { reason: /Nothing of this payment is left/ } });
        t.equal(await reversed(), '1.000000', "the account's cumulative creditReversedUsd");

        // Three refunds of 0.40 of a 1.00 payment at once: two fit, in turn, on either database.
        const racing = await Promise.all([0, 1, 2].map(() => refund(purchase, { amountUsd: '0.40' })));
        t.same(racing.map((r) => r.status).sort(), [200, 200, 400]);
        t.equal(await reversed(), '1.800000');
        const won = await dispute(purchase, 'open').then(() => dispute(purchase, 'won'));
        t.match(
          won.body.payment,
          { disputeStatus: 'won', disputeLostUsd: '0.000000', refundedUsd: '0.800000' },
          'a won dispute takes nothing',
        );
        t.equal(await reversed(), '1.800000');
      });

      await t.test("on a live rail, a sandbox seller's documents offer no payment, and its listing says so", async (t) => {
        const payable = async () => {
          const { discovery } = (await api.get(`/v1/sellers/${sandbox.id}/discovery`, key)).body;
          return !discovery.listing.issues.some((i: { code: string }) => i.code === 'payments_unavailable');
        };
        t.equal(await payable(), true, 'payable on the test rail');
        rail.test = false;
        try {
          t.equal(await payable(), false, 'not on a live one');
        } finally {
          rail.test = true;
        }
      });

      await t.test('nothing of it shows live, and it unlocks nothing live', async (t) => {
        const analytics = await api.get(`/v1/analytics/sellers/${live.id}?days=7&timeZone=UTC`, key);
        t.match(analytics.body.analytics, { calls: 0, transactions: 0, revenueUsd: '0.000000', attempts: 0, recentTransactions: [] });
        const sandboxed = await api.get(`/v1/analytics/sellers/${sandbox.id}?days=7&timeZone=UTC`, key);
        t.ok(sandboxed.body.analytics.transactions >= 3, 'the sandbox seller has its own');
        // Its calls too (completions reach the control-plane in the proxy's next batch).
        const calls = async () => (await api.get(`/v1/analytics/sellers/${sandbox.id}?days=7&timeZone=UTC`, key)).body.analytics.calls;
        t.ok(await eventually(async () => (await calls()) >= 4), 'the four calls it was answered count under it');
        t.same((await api.get(`/v1/accounts?sellerId=${live.id}`, key)).body.accounts, [], 'no live account');
        seen.length = 0;
        const asTestAgent = { headers: { authorization: `Bearer ${testAgent.token}` } };
        const atLive = await hub.pay('shop', '/search', asTestAgent);
        t.equal(atLive.status, 403, 'a test agent is kept off the live pay URL');
        t.match(await atLive.json(), { error: 'test_agent_not_allowed' });
        t.equal((await hub.pay('shop', '/extend', { ...asTestAgent, method: 'POST' })).status, 403, 'its storefront too');
        t.equal((await hub.pay('shop', '/manifest.json', asTestAgent)).status, 403, 'and its manifest');
        t.same(seen, [], 'the live seller saw none of it');
        await hub.pay('shop', '/search');
        t.equal(seen[0]?.sandbox, undefined, 'live traffic carries no hub-sandbox');
        t.notMatch(seen[0]?.signature ?? '', /sb=1/);
        t.match(await api.post(`/v1/sandbox/accounts/${accessId}/clock`, key, { advanceSeconds: 1 }), { status: 200 });
      });
    });
  }
});
