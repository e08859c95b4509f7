import t from 'tap';
import { request as undiciRequest } from 'undici';
import { newId } from '../../../shared/ids.js';
import { seedPricedService } from '../../helpers/catalog-seed.js';
import { testProviders } from '../../helpers/database.js';
import { startTestHub, type TestHub } from '../../helpers/hub.js';
import { sellerBehind, startTestUpstream } from '../../helpers/upstream.js';

for (const provider of testProviders()) {
  t.test(`proxy forwarding on ${provider}`, async (t) => {
    const hub = await startTestHub(t, provider);
    const upstream = await startTestUpstream(t);
    const seller = await sellerBehind(hub, upstream);

    await t.test('unknown hosts are 404 seller_not_found', async (t) => {
      const res = await hub.pay('nobody', '/echo');
      t.equal(res.status, 404);
      t.same(await res.json(), { error: 'seller_not_found' });
      const ip = await fetch(`${hub.proxyUrl}/echo`);
      t.equal(ip.status, 404, 'an IP host names no seller');
      for (const length of [254, 301, 4_000]) {
        const long = await hub.pay('a'.repeat(length), '/echo');
        t.same(
          [long.status, await long.json()],
          [404, { error: 'seller_not_found' }],
          `a ${length}-character host is no seller's, not a 500`,
        );
      }
    });

    await t.test('anonymous probe: signed, with a request id and no identity headers', async (t) => {
      const res = await hub.pay('acme', '/echo/a%2Fb/../c?x=1&x=2&y=%20');
      t.equal(res.status, 200);
      t.equal(res.headers.get('x-upstream'), 'yes');
      const seen = upstream.seen.at(-1)!;
      t.equal(
        seen.url,
        '/echo/a%2Fb/../c?x=1&x=2&y=%20',
        'path and query forwarded unnormalized (and the SDK verified the signature over them)',
      );
      t.match(seen.headers['hub-request-id'], /^hubreq_[0-9A-Za-z]{24}$/);
      t.match(seen.headers['hub-signature'], new RegExp(`^t=\\d+,kid=${seller.kid},v1=[0-9a-f]{64}$`));
      for (const h of ['hub-agent-id', 'hub-anonymous-id', 'hub-buyer-id', 'hub-sandbox']) t.notOk(seen.headers[h], `no ${h}`);
      t.same(seen.identity.agentId, undefined);
      t.equal(seen.headers['x-forwarded-host'], 'acme.pay.localhost');
      t.equal(seen.headers['x-forwarded-proto'], 'http');
      t.match(seen.headers['x-forwarded-for'], /127\.0\.0\.1$/);
      t.equal(res.headers.get('x-hop'), null, 'fields named in the upstream Connection header are dropped');
    });

    await t.test('inbound hub-*, x-hub-* and payment headers never reach the seller', async (t) => {
      const agent = await hub.agent();
      const res = await hub.pay('acme', '/echo', {
        headers: {
          authorization: `Bearer ${agent.token}`,
          'hub-agent-id': 'agt_spoofed',
          'hub-anonymous-id': 'agt_spoofed',
          'hub-buyer-id': 'byr_spoofed',
          'hub-request-id': 'hubreq_spoofed',
          'hub-signature': 't=1,kid=hsec_x,v1=00',
          'hub-sandbox': '1',
          'x-hub-anything': 'x',
          payment: 'proof',
          'x-custom': 'kept',
        },
      });
      t.equal(res.status, 200);
      const seen = upstream.seen.at(-1)!;
      t.equal(seen.headers['hub-agent-id'], agent.agentId, 'hub sets the real agent id');
      t.equal(seen.headers['hub-anonymous-id'], agent.agentId);
      t.notOk(seen.headers['hub-buyer-id'], 'spoofed buyer id dropped; this agent has no owner');
      t.not(seen.headers['hub-request-id'], 'hubreq_spoofed');
      t.notOk(seen.headers['hub-sandbox']);
      // x-payment, payment-signature and payment-authorization are read as payments (a junk one is a
      // 400, a valid one consumed): test/proxy/payments/*-paid-call.test.ts check they never reach the seller.
      for (const h of ['x-hub-anything', 'payment']) t.notOk(seen.headers[h], `${h} stripped`);
      t.notOk(seen.headers.authorization, 'the agent token is consumed, not forwarded');
      t.equal(seen.headers['x-custom'], 'kept');
    });

    await t.test('identity combinations', async (t) => {
      const owned = await hub.agent({ buyer: true });
      await hub.pay('acme', '/echo', { headers: { authorization: `Bearer ${owned.token}` } });
      const seen = upstream.seen.at(-1)!;
      t.equal(seen.headers['hub-agent-id'], owned.agentId);
      t.equal(seen.headers['hub-anonymous-id'], owned.agentId);
      t.equal(seen.headers['hub-buyer-id'], owned.buyerId, 'buyer id once the owner is known');
      t.equal(seen.identity.buyerId, owned.buyerId, 'the SDK reads it');

      const res = await hub.pay('acme', '/echo', { headers: { authorization: 'Bearer hubagt_notarealtoken0000000000000000000000000' } });
      t.equal(res.status, 401);
      const body = (await res.json()) as { error: string; auth: unknown };
      t.equal(body.error, 'bearer_required');
      t.match(body.auth, { scheme: 'Bearer', challengeUrl: /\/agents\/challenge$/, registerUrl: /\/agents\/register$/ });

      const sellerAuth = await hub.pay('acme', '/echo', { headers: { authorization: 'Bearer seller-own-key' } });
      t.equal(sellerAuth.status, 200);
      t.equal(upstream.seen.at(-1)!.headers.authorization, 'Bearer seller-own-key', 'a seller’s own auth passes through unchanged');
      t.notOk(upstream.seen.at(-1)!.headers['hub-agent-id'], 'and is not an agent identity');
    });

    await t.test("the seller's usage check finds an identified request while serving it", async (t) => {
      const agent = await hub.agent({ buyer: true });
      const checks: unknown[] = [];
      const hooked = await startTestUpstream(t, async (_req, identity) => {
        // What a seller does first: ask the control-plane whether this request is backed.
        const reply = await fetch(`${hub.cp.url}/v1/usage/check`, {
          method: 'POST',
          headers: { authorization: `Bearer ${hub.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ zcRequestId: identity.requestId, serviceSlug: 'search', usage: [{ meterSlug: 'calls', quantity: 1 }] }),
        });
        checks.push(await reply.json());
      });
      const s = await hub.seller({ slug: 'recorded', upstreamBaseUrl: hooked.url });
      hooked.secrets.set(s.kid, s.secret);
      await grantAccess(hub, s.id, agent.agentId);

      for (let i = 0; i < 20; i++) {
        const res = await hub.pay('recorded', `/echo?i=${i}`, { headers: { authorization: `Bearer ${agent.token}` } });
        t.equal(res.status, 200);
      }
      t.same(
        checks,
        Array.from({ length: 20 }, () => ({ allowed: true, reason: null })),
        'every check found its request and the agent behind it',
      );
      await hub.proxy.services.recorder.drain();
      const id = hooked.seen[0]!.identity.requestId;
      t.match(await hub.cp.db.requestRecord.findUnique({ where: { id } }), {
        sellerId: s.id,
        agentId: agent.agentId,
        buyerId: agent.buyerId,
        method: 'GET',
        path: '/echo?i=0',
        lifecycle: 'delivered',
        upstreamStatus: 200,
      });
    });

    await t.test('hub-mode: free is recorded for agents and needs an agent credential', async (t) => {
      const agent = await hub.agent({ buyer: true });
      const res = await hub.pay('acme', '/echo?free', { headers: { authorization: `Bearer ${agent.token}`, 'hub-mode': 'Free' } });
      t.equal(res.status, 200);
      const seen = upstream.seen.at(-1)!;
      t.notOk(seen.headers['hub-mode'], 'hub-mode itself is not forwarded (a hub-* field)');
      await hub.proxy.services.recorder.drain();
      t.equal((await hub.cp.db.requestRecord.findUnique({ where: { id: seen.identity.requestId } }))?.mode, 'free');
      const other = await hub.pay('acme', '/echo?paid', { headers: { authorization: `Bearer ${agent.token}`, 'hub-mode': 'cheap' } });
      t.equal(other.status, 200);
      await hub.proxy.services.recorder.drain();
      t.equal(
        (await hub.cp.db.requestRecord.findUnique({ where: { id: upstream.seen.at(-1)!.identity.requestId } }))?.mode,
        'paid',
        'any other value is paid mode',
      );
      const anonymous = await hub.pay('acme', '/echo', { headers: { 'hub-mode': 'free' } });
      t.equal(anonymous.status, 401);
      t.match(await anonymous.json(), { error: 'bearer_required', auth: { scheme: 'Bearer' } });
    });

    await t.test('request bodies are forwarded byte for byte and covered by the signature', async (t) => {
      const body = JSON.stringify({ text: 'héllo — 世界', n: 1 });
      const res = await hub.pay('acme', '/echo', { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      t.equal(res.status, 200);
      t.equal(upstream.seen.at(-1)!.body, body);
      const big = await hub.pay('acme', '/big');
      t.equal((await big.arrayBuffer()).byteLength, 200_000, 'large responses stream through whole');
    });

    await t.test('sandbox sellers send hub-sandbox: 1 and sign with sb=1', async (t) => {
      const sandboxSeller = await hub.seller({ slug: 'sandy', upstreamBaseUrl: upstream.url, sandbox: true });
      upstream.secrets.set(sandboxSeller.kid, sandboxSeller.secret);
      t.equal((await hub.pay('sandy', '/echo')).status, 200);
      const seen = upstream.seen.at(-1)!;
      t.equal(seen.headers['hub-sandbox'], '1');
      t.match(seen.headers['hub-signature'], /,sb=1$/);
      t.equal(seen.identity.sandbox, true);
    });

    await t.test('upstream statuses and bodies pass through unchanged', async (t) => {
      const res = await hub.pay('acme', '/status/418');
      t.equal(res.status, 418);
      t.same(await res.json(), { status: 418 });
    });

    await t.test('a seller without an active signing secret is 409 signing_secret_required', async (t) => {
      const s = await hub.seller({ slug: 'nosecret', upstreamBaseUrl: upstream.url });
      await hub.cp.db.signingSecret.updateMany({ where: { sellerId: s.id }, data: { status: 'retired' } });
      const res = await hub.pay('nosecret', '/echo');
      t.equal(res.status, 409);
      t.same(await res.json(), { error: 'signing_secret_required' });
    });

    await t.test('a 401 from the seller after a rotation is retried once with the newest secret', async (t) => {
      const s = await hub.seller({ slug: 'rotating', upstreamBaseUrl: upstream.url });
      upstream.secrets.set(s.kid, s.secret);
      t.equal((await hub.pay('rotating', '/echo')).status, 200, 'the proxy caches the first secret');
      const fresh = await hub.rotateSecretQuietly(s.id);
      upstream.secrets.delete(s.kid);
      upstream.secrets.set(fresh.kid, fresh.secret);
      const before = upstream.seen.length;
      const res = await hub.pay('rotating', '/echo');
      t.equal(res.status, 200, 'the retry with the new secret is served');
      t.equal(upstream.seen.length, before + 1, 'the upstream served exactly one (the retry); the first was refused by the SDK');
      t.match(upstream.seen.at(-1)!.headers['hub-signature'], new RegExp(`kid=${fresh.kid}`));

      upstream.secrets.delete(fresh.kid);
      const refused = await hub.pay('rotating', '/echo');
      t.equal(refused.status, 401, 'a 401 with no newer secret reaches the agent');
      t.match(await refused.json(), { error: 'invalid_zeroclick_signature' });
      upstream.secrets.set(fresh.kid, fresh.secret);
    });

    await t.test('server-sent events reach the agent before the upstream finishes', async (t) => {
      const res = await undiciRequest(`${hub.proxyUrl}/sse`, { headers: { host: 'acme.pay.localhost' } });
      t.equal(res.statusCode, 200);
      t.equal(res.headers['content-type'], 'text/event-stream');
      const reader = res.body[Symbol.asyncIterator]();
      const first = await Promise.race([reader.next(), new Promise((r) => setTimeout(() => r('timeout'), 3_000))]);
      t.not(first, 'timeout', 'the first event arrived while the upstream still holds the stream open');
      t.match(Buffer.from((first as IteratorResult<Buffer>).value).toString(), /data: first/);
      upstream.release();
      let rest = '';
      for (let next = await reader.next(); !next.done; next = await reader.next()) rest += Buffer.from(next.value).toString();
      t.match(rest, /data: second/);
    });

    await t.test('manifest.json lists the seller’s plans with their prices', async (t) => {
      const db = hub.cp.db;
      const { serviceId } = await seedPricedService(db, {
        organizationId: hub.organizationId,
        sellerId: seller.id,
        plan: { slug: 'payg', name: 'Per call', billingMode: 'payg' },
        priceMicros: 10_000n,
        ids: {
          serviceId: `svc_${'m'.repeat(24)}`,
          meterId: `mtr_${'m'.repeat(24)}`,
          planId: `pln_${'m'.repeat(24)}`,
          priceId: `pmp_${'m'.repeat(24)}`,
        },
      });
      await db.plan.create({
        data: {
          id: `pln_${'n'.repeat(24)}`,
          organizationId: hub.organizationId,
          serviceId,
          name: 'Credits',
          slug: 'credits',
          billingMode: 'credit',
          interval: 'none',
          minimumPurchaseMicros: 5_000_000n,
          verifiedEmailPolicy: 'off',
        },
      });
      await db.seller.update({ where: { id: seller.id }, data: { updatedAt: new Date() } });
      await hub.proxy.services.catalog.catchUp(); // the cached manifest predates the plan
      const anonymous = await hub.pay('acme', '/manifest.json');
      t.equal(anonymous.status, 401, 'only registered agents read it');
      t.match(await anonymous.json(), { error: 'bearer_required', auth: { challengeUrl: /\/agents\/challenge$/ } });
      const unknown = await hub.pay('acme', '/manifest.json', { headers: { authorization: 'Bearer hubagt_unknown' } });
      t.equal(unknown.status, 401);
      const agent = await hub.agent();
      const res = await hub.pay('acme', '/manifest.json', { headers: { authorization: `Bearer ${agent.token}` } });
      t.equal(res.status, 200);
      t.match(res.headers.get('cache-control'), /^private/, 'no shared cache keeps it');
      const manifest = (await res.json()) as { seller: unknown; plans: unknown[] };
      t.match(manifest.seller, { id: seller.id, slug: 'acme' });
      t.match(manifest.plans, [
        {
          id: `pln_${'n'.repeat(24)}`,
          slug: 'credits',
          kind: 'standard',
          billingMode: 'credit',
          purchasable: true,
          minimumPurchaseUsd: '5.000000',
          includedCreditUnits: 0,
          includedCreditUnitLabel: null,
          verifiedEmailPolicy: 'off',
          maxClaims: null,
          prices: [],
        },
        {
          id: `pln_${'m'.repeat(24)}`,
          slug: 'payg',
          billingMode: 'payg',
          purchasable: false,
          serviceSlug: 'search',
          prices: [{ meterSlug: 'calls', unit: 'call', priceUsd: '0.010000', unitSize: 1 }],
        },
      ]);
    });

    await t.test('a seller’s response cannot pose as hub: every header hub owns is dropped', async (t) => {
      for (const status of [200, 401, 500]) {
        const res = await hub.pay('acme', `/forged/${status}`);
        t.equal(res.status, status);
        for (const name of [
          'hub-billing',
          'hub-usage-error',
          'hub-usage-adjusted',
          'x-hub-anything',
          'payment-response',
          'x-payment-response',
          'payment-receipt',
          'payment-required',
        ]) {
          t.equal(res.headers.get(name), null, `${status}: ${name}`);
        }
        t.not(res.headers.get('hub-request-id'), 'hubreq_forged', `${status}: hub-request-id is hub's own, if any`);
        t.equal(res.headers.get('www-authenticate'), 'Bearer realm="seller"', `${status}: only the seller's own scheme`);
        t.equal(res.headers.get('x-seller'), 'kept', `${status}: the seller's other headers pass`);
        t.same(await res.json(), { forged: true });
      }
    });

    await t.test('hub-usage is honoured on 2xx, validated, and always stripped', async (t) => {
      // Captured usage takes the usage-report path: it needs something behind the request, here
      // an agent's access to the `credits` plan, which prices `calls` at $0.001.
      const db = hub.cp.db;
      const agent = await hub.agent();
      await db.planMeterPrice.create({
        data: {
          id: `pmp_${'n'.repeat(24)}`,
          organizationId: hub.organizationId,
          planId: `pln_${'n'.repeat(24)}`,
          meterId: `mtr_${'m'.repeat(24)}`,
          priceMicros: 1_000n,
        },
      });
      const access = await db.access.create({
        data: {
          id: `hubacc_${'n'.repeat(24)}`,
          sellerId: seller.id,
          planId: `pln_${'n'.repeat(24)}`,
          agentId: agent.agentId,
          status: 'active',
          creditGrantedMicros: 1_000_000n,
          balanceMicros: 1_000_000n,
        },
      });
      const asAgent = { headers: { authorization: `Bearer ${agent.token}` } };

      const ok = await hub.pay('acme', '/usage/ok', asAgent);
      t.equal(ok.status, 200);
      t.equal(ok.headers.get('hub-usage'), null, 'stripped');
      t.equal(ok.headers.get('hub-usage-error'), null);
      const requestId = upstream.seen.at(-1)!.identity.requestId;
      const event = await hub.cp.db.usageEvent.findFirst({ where: { requestId }, include: { items: true } });
      t.match(event, {
        source: 'header',
        organizationId: hub.organizationId,
        accessId: access.id,
        costMicros: 3_000n,
        idempotencyKey: `hub-usage:${requestId}:search`,
      });
      t.equal(event?.items[0]?.quantity, 3n, 'recorded against the request');
      t.equal((await db.access.findUniqueOrThrow({ where: { id: access.id } })).balanceMicros, 997_000n, 'and drawn from the access');

      const anonymous = await hub.pay('acme', '/usage/ok');
      t.equal(anonymous.status, 200, 'delivered all the same');
      t.equal(anonymous.headers.get('hub-usage-error'), 'access_not_found', 'nothing stands behind an anonymous request');

      const bad = await hub.pay('acme', '/usage/bad');
      t.equal(bad.status, 200, 'the response is still delivered');
      t.equal(bad.headers.get('hub-usage-error'), 'invalid_usage_header');
      t.equal(bad.headers.get('hub-usage'), null);
      t.same(await bad.json(), { ok: true });

      const refused = await hub.pay('acme', '/usage/4xx', asAgent);
      t.equal(refused.status, 400);
      t.equal(refused.headers.get('hub-usage'), null, 'stripped from a 4xx too');
      t.equal(refused.headers.get('hub-usage-error'), null, 'and ignored there');
      t.equal(
        await hub.cp.db.usageEvent.count({ where: { requestId: upstream.seen.at(-1)!.identity.requestId } }),
        0,
        'nothing recorded for a 4xx',
      );

      const unknown = await hub.pay('acme', '/usage/unknown-meter', asAgent);
      t.equal(unknown.status, 200);
      t.equal(unknown.headers.get('hub-usage-error'), 'meter_not_found');
    });
  });
}

/** A credit plan of a `search` service (meter `calls`, $0.001 each) and an access to it for the agent. */
async function grantAccess(hub: TestHub, sellerId: string, agentId: string): Promise<void> {
  const { db } = hub.cp;
  const organizationId = hub.organizationId;
  const { planId } = await seedPricedService(db, {
    organizationId,
    sellerId,
    plan: { slug: 'credits', name: 'Credits', billingMode: 'credit' },
    priceMicros: 1_000n,
  });
  await db.access.create({
    data: {
      id: newId('access'),
      sellerId,
      planId,
      agentId,
      status: 'active',
      periodStart: new Date(Date.now() - 3_600_000),
      periodEnd: new Date(Date.now() + 86_400_000),
      creditGrantedMicros: 1_000_000n,
      balanceMicros: 1_000_000n,
    },
  });
}
