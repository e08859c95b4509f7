import pino from 'pino';
import t from 'tap';
import { setStatefulFlags } from '../../../control-plane/catalog/sellers.js';
import { AccountWriteWorker } from '../../../control-plane/delivery/account-write-worker.js';
import { createSellerApp } from '../../../examples/seller/app.js';
import { closeServer, listen } from '../../../runtime/http-server.js';
import { createReplyKey, decryptReply, encryptRequest, fetchJwks } from '../../../sdk/encryption.js';
import type { PaymentRequirements } from '../../../shared/payments/x402-wire.js';
import { registerAgent } from '../../helpers/agents.js';
import { claimAgent } from '../../helpers/claims.js';
import { testProviders } from '../../helpers/database.js';
import { addEncryptionKey, craftJwe, jwksListing, retireEncryptionKey } from '../../helpers/encryption.js';
import { startPaidWorld } from '../../helpers/paid-world.js';
import { signPayment } from '../../helpers/sign-payment.js';
import { startTestSmtpServer } from '../../helpers/smtp-server.js';

// The stateful path end to end with the reference seller (examples/seller) as the account
// endpoint: purchase → account write → active → POST /keys/redeem → the key works against the
// seller's own API; another agent of the same human gets a key too, in both write variants. Then
// every answer a mint can get, the retries of temporary failures within the agent's wait, the
// plan's re-mint policy, and the refusals made before asking.

const b64json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');

for (const provider of testProviders()) {
  t.test(`key redeem on ${provider}`, async (t) => {
    const smtp = await startTestSmtpServer(t);
    const { hub, chain, db, api, payerKey, url, sellerId, rail, secretOf, offerPlan } = await startPaidWorld(t, provider, {
      env: { HUB_SMTP_URL: smtp.url },
    });
    const app = createSellerApp({ secrets: secretOf, hub: { baseUrl: hub.cp.url, apiKey: hub.apiKey }, serviceSlug: 'search' });
    const port = await listen(app, 0, '127.0.0.1');
    t.teardown(() => closeServer(app, 100));
    const sellerApi = `http://127.0.0.1:${port}`;
    const worker = new AccountWriteWorker(db, hub.cp.masterKey, { live: rail }, pino({ level: 'silent' }), { pollMs: 60_000 });
    const agent = await registerAgent(hub, 'acme');
    const headers = { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' };
    const redeem = async (query = '', body?: unknown) => {
      const res = await fetch(url(`/keys/redeem${query}`), { method: 'POST', headers, ...(body ? { body: JSON.stringify(body) } : {}) });
      return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
    };

    const plan = { id: await offerPlan({ name: 'Monthly', slug: 'monthly', billingMode: 'subscription', basePriceUsd: '2.00' }) };

    await t.test('refused before the seller is asked', async (t) => {
      t.match(await redeem(), { status: 501, body: { error: 'entitlements_not_available', reason: /servicing is off/ } });
      await setStatefulFlags(db, sellerId, { servicing: true });
      t.match(await redeem(), { status: 501, body: { error: 'entitlements_not_available', reason: /issues no keys/ } });
      await api.put(`/v1/sellers/${sellerId}/stateful-access`, hub.apiKey, {
        stateful: true,
        accessEndpointUrl: `${sellerApi}/zeroclick/access`,
      });
      t.match(await redeem(), { status: 404, body: { error: 'access_not_found' } }, 'no account yet');
      t.match(await redeem('?accessId=nope'), { status: 400, body: { error: 'invalid_request' } });
      t.match(await redeem('', { accessId: 'hubacc_000000000000000000000000', extra: 1 }), {
        status: 400,
        body: { error: 'invalid_request' },
      });
    });

    const buy = async () => {
      const body = JSON.stringify({ planId: plan.id });
      const challenge = await fetch(url('/extend'), { method: 'POST', headers, body });
      const requirements = ((await challenge.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
      const payment = await signPayment(chain, payerKey, requirements);
      const res = await fetch(url('/extend'), { method: 'POST', headers: { ...headers, 'payment-signature': b64json(payment) }, body });
      return ((await res.json()) as { account: { accessId: string } }).account.accessId;
    };

    let accessId = '';
    await t.test('purchase → write → active → redeem → the key works against the seller', async (t) => {
      accessId = await buy();
      const early = await redeem();
      t.match(early, { status: 409, body: { error: 'account_not_provisioned', retryAfterSeconds: 30 } }, 'not before the seller has it');
      t.equal(early.headers.get('retry-after'), '30');

      await worker.runOnce();
      t.match(await db.access.findUniqueOrThrow({ where: { id: accessId } }), { provisioningState: 'active' });
      const minted = await redeem();
      t.match(minted, { status: 200, body: { accessId, apiKey: /^sk_demo_/, maxKeys: 1, keyExpiresAt: /Z$/ } });
      t.equal(minted.headers.get('cache-control'), 'no-store');

      const served = await fetch(`${sellerApi}/keyed`, { headers: { authorization: `Bearer ${minted.body.apiKey}` } });
      t.equal(served.status, 200);
      t.match(await served.json(), { served: true, accessId, plan: 'monthly' });

      const again = await redeem(`?accessId=${accessId}`);
      t.equal(again.status, 200, 'a lost key is minted anew');
      t.equal(
        (await fetch(`${sellerApi}/keyed`, { headers: { authorization: `Bearer ${minted.body.apiKey}` } })).status,
        401,
        'and the old one stops working',
      );

      const dump = JSON.stringify(
        await Promise.all([db.accountWrite.findMany(), db.paymentAttempt.findMany(), db.requestRecord.findMany()]),
        (_k, v) => (typeof v === 'bigint' ? v.toString() : v),
      );
      t.notOk(dump.includes(minted.body.apiKey) || dump.includes(again.body.apiKey), 'no key is stored by hub');
    });

    await t.test('two accounts: the agent must name one', async (t) => {
      const second = await buy();
      await worker.runOnce();
      t.match(await redeem(), { status: 400, body: { error: 'invalid_request', reason: /hold 2 accounts/ } });
      t.match(await redeem('', { accessId: second }), { status: 200, body: { accessId: second } });
    });

    await t.test('an encrypted redeem: the key comes back encrypted to the agent’s reply key', async (t) => {
      const kid = await addEncryptionKey(api, hub.apiKey, sellerId);
      const jwks = await jwksListing(() => fetchJwks(url('/')), [kid]);
      const replyKey = await createReplyKey();
      const sealedRedeem = async (body: string) =>
        fetch(url('/keys/redeem'), {
          method: 'POST',
          headers: { authorization: headers.authorization, 'content-type': 'application/jose' },
          body,
        });
      const res = await sealedRedeem(
        await encryptRequest(jwks, JSON.stringify({ accessId }), { replyKey, contentType: 'application/json' }),
      );
      t.equal(res.status, 200);
      t.equal(res.headers.get('content-type'), 'application/jose');
      t.equal(res.headers.get('cache-control'), 'no-store');
      const text = await res.text();
      t.notMatch(text, /sk_demo_/, 'the key is not readable on the way');
      const key = JSON.parse(new TextDecoder().decode((await decryptReply(text, replyKey)).plaintext));
      t.match(key, { accessId, apiKey: /^sk_demo_/ });
      const served = await fetch(`${sellerApi}/keyed`, { headers: { authorization: `Bearer ${key.apiKey}` } });
      t.equal(served.status, 200, 'and it works');

      const refused = await sealedRedeem(
        await craftJwe(jwks.keys[0]!, { kid: 'hjwk_000000000000000000000000', reply_jwk: replyKey.publicJwk }),
      );
      t.match([refused.status, await refused.json()], [400, { error: 'unknown_jwe_kid' }]);
      await retireEncryptionKey(api, hub.apiKey, sellerId, kid);
      await jwksListing(() => fetchJwks(url('/')), []);
    });

    await t.test('another agent of the same human gets a key, in both write variants', async (t) => {
      const other = await registerAgent(hub, 'acme');
      const redeemAs = async (token: string, id: string) => {
        const res = await fetch(url(`/keys/redeem?accessId=${id}`), { method: 'POST', headers: { authorization: `Bearer ${token}` } });
        return { status: res.status, body: (await res.json()) as Record<string, any> };
      };
      const works = async (apiKey: string) =>
        (await fetch(`${sellerApi}/keyed`, { headers: { authorization: `Bearer ${apiKey}` } })).status;

      t.match(await redeemAs(other.token, accessId), { status: 404, body: { error: 'access_not_found' } }, 'a stranger gets none');
      await claimAgent(smtp, url, agent.token, 'dana@example.com');
      await claimAgent(smtp, url, other.token, 'dana@example.com');

      // Original variant (the default): the seller hears of no human, so the mint names the
      // account's own customer, whom hub has matched to the redeeming agent's human.
      const viaHuman = await redeemAs(other.token, accessId);
      t.match(viaHuman, { status: 200, body: { accessId, apiKey: /^sk_demo_/, maxKeys: 1 } }, 'original variant');
      t.equal(await works(viaHuman.body.apiKey), 200, 'and the key works against the seller');

      // Later variant: the mint names the redeeming agent and vouches for its human with buyerId,
      // which the seller learnt from an account write in that variant.
      await api.put(`/v1/sellers/${sellerId}/stateful-access`, hub.apiKey, { accountWriteVariant: 'later' });
      const laterAccount = await buy();
      await worker.runOnce();
      const later = await redeemAs(other.token, laterAccount);
      t.match(later, { status: 200, body: { accessId: laterAccount, apiKey: /^sk_demo_/ } }, 'later variant');
      t.equal(await works(later.body.apiKey), 200);
      await api.put(`/v1/sellers/${sellerId}/stateful-access`, hub.apiKey, { accountWriteVariant: 'original' });
    });

    await t.test('what the seller answers reaches the agent', async (t) => {
      // The seller's endpoint replaced by one that answers as told.
      const { createServer } = await import('node:http');
      let reply: { status: number; body: string; delayMs?: number } = { status: 200, body: '{}' };
      const fake = createServer((req, res) => {
        req.resume();
        setTimeout(() => res.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.body), reply.delayMs ?? 0);
      });
      const fakePort = await listen(fake, 0, '127.0.0.1');
      t.teardown(() => closeServer(fake, 100));
      await api.put(`/v1/sellers/${sellerId}/stateful-access`, hub.apiKey, {
        accessEndpointUrl: `http://127.0.0.1:${fakePort}/zeroclick/access`,
      });
      const cases: [typeof reply, number, Record<string, unknown>][] = [
        [
          { status: 409, body: '{"notProvisioned":true,"retryAfterSeconds":12}' },
          409,
          { error: 'account_not_provisioned', retryAfterSeconds: 12 },
        ],
        [{ status: 409, body: '{"notProvisioned":true}' }, 409, { error: 'account_not_provisioned', retryAfterSeconds: 30 }],
        [{ status: 409, body: '{"conflict":{"code":"too_many_keys"}}' }, 409, { error: 'key_mint_refused', sellerCode: 'too_many_keys' }],
        [{ status: 404, body: '{"unknown":true}' }, 502, { error: 'key_mint_failed', reason: /does not know this account/ }],
        [{ status: 400, body: '{"error":"bad"}' }, 502, { error: 'key_mint_failed', reason: /answered 400/ }],
        // Temporary failures, tried again until the agent's wait is used up (below for the count).
        [
          { status: 503, body: '{"error":"service_unavailable"}' },
          502,
          { error: 'key_mint_failed', reason: /answered 503 \(3 attempts\)/, retryAfterSeconds: 30 },
        ],
        [{ status: 200, body: 'not json' }, 502, { error: 'key_mint_failed', reason: /no key hub could read/, retryAfterSeconds: 30 }],
        [{ status: 200, body: 'null' }, 502, { error: 'key_mint_failed', reason: /no key hub could read/ }],
        [{ status: 200, body: '"sk_live"' }, 502, { error: 'key_mint_failed', reason: /no key hub could read/ }],
        // Past the seller's 7 s budget: the real one, since the mint is the agent's own request. No
        // second attempt fits in what is left of the agent's wait, so the agent hears at once.
        [
          { status: 200, body: '{"apiKey":"too_late"}', delayMs: 7_300 },
          502,
          { error: 'key_mint_failed', reason: /did not answer: no answer within 7000 ms \(1 attempt\)/, retryAfterSeconds: 30 },
        ],
      ];
      for (const [given, status, expected] of cases) {
        reply = given;
        const answered = await redeem(`?accessId=${accessId}`);
        t.match(answered, { status, body: expected }, given.body);
        const hint = answered.body.retryAfterSeconds;
        t.equal(answered.headers.get('retry-after'), hint === undefined ? null : String(hint), 'the hint is Retry-After too');
        if (answered.body.error === 'key_mint_failed' && !/attempt/.test(answered.body.reason))
          t.notOk('retryAfterSeconds' in answered.body);
      }
    });

    await t.test('temporary failures are retried within the agent’s wait (spec: Limits)', async (t) => {
      // A seller endpoint that answers from a script, one entry per attempt, and counts attempts.
      type Scripted = { status: number; body?: string; retryAfter?: string } | 'hangup';
      let script: Scripted[] = [];
      let attempts = 0;
      const { createServer } = await import('node:http');
      const fake = createServer((req, res) => {
        req.resume();
        attempts++;
        const next = script.shift() ?? { status: 500 };
        if (next === 'hangup') return void req.socket.destroy();
        res.writeHead(next.status, { 'content-type': 'application/json', ...(next.retryAfter ? { 'retry-after': next.retryAfter } : {}) });
        res.end(next.body ?? '{"error":"fault"}');
      });
      const fakePort = await listen(fake, 0, '127.0.0.1');
      t.teardown(() => closeServer(fake, 100));
      await api.put(`/v1/sellers/${sellerId}/stateful-access`, hub.apiKey, {
        accessEndpointUrl: `http://127.0.0.1:${fakePort}/zeroclick/access`,
      });
      const key = { status: 200, body: '{"apiKey":"sk_after_retry"}' };
      const run = async (given: Scripted[]) => {
        script = [...given];
        attempts = 0;
        const started = Date.now();
        const answered = await redeem(`?accessId=${accessId}`);
        return { ...answered, attempts, tookMs: Date.now() - started };
      };

      for (const [first, name] of [
        [{ status: 503 }, 'a 503'],
        [{ status: 429 }, 'a 429'],
        ['hangup', 'a connection cut without an answer'],
        [{ status: 200, body: '{"apiKey": sk' }, 'a 200 whose body does not parse'],
      ] as [Scripted, string][]) {
        const answered = await run([first, key]);
        t.match(answered, { status: 200, attempts: 2, body: { apiKey: 'sk_after_retry' } }, `${name}, then the key`);
      }

      const hinted = await run([{ status: 503, retryAfter: '1' }, key]);
      t.match(hinted, { status: 200, attempts: 2 }, 'a Retry-After that fits in the wait is honoured');
      t.ok(hinted.tookMs >= 1_000, 'after the pause the seller asked for');

      const later = await run([{ status: 429, retryAfter: '120' }]);
      t.match(
        later,
        { status: 502, attempts: 1, body: { error: 'key_mint_failed', retryAfterSeconds: 120 } },
        'a longer pause than the agent can wait: answered at once with the seller’s hint',
      );
      t.equal(later.headers.get('retry-after'), '120');

      const down = await run([{ status: 503 }, { status: 502 }, { status: 500 }, key]);
      t.match(down, { status: 502, attempts: 3, body: { error: 'key_mint_failed', retryAfterSeconds: 30 } }, 'three attempts at most');
      t.ok(down.tookMs < 10_000, 'within the proxy’s wait for the control-plane');

      for (const status of [400, 403, 404]) {
        t.match(await run([{ status }, key]), { status: 502, attempts: 1 }, `${status} is not retried`);
      }
      t.match(
        await run([{ status: 409, body: '{"notProvisioned":true}' }, key]),
        { status: 409, attempts: 1, body: { error: 'account_not_provisioned', retryAfterSeconds: 30 } },
        'not provisioned is the agent’s to retry (spec: Default mint retry)',
      );
    });

    await t.test('the plan’s re-mint policy: rotating answers maxKeys 1', async (t) => {
      const { createServer } = await import('node:http');
      let body = '{"apiKey":"sk_many","maxKeys":5}';
      const fake = createServer((req, res) => {
        req.resume();
        res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      });
      const fakePort = await listen(fake, 0, '127.0.0.1');
      t.teardown(() => closeServer(fake, 100));
      await api.put(`/v1/sellers/${sellerId}/stateful-access`, hub.apiKey, {
        accessEndpointUrl: `http://127.0.0.1:${fakePort}/zeroclick/access`,
      });

      t.match((await api.get(`/v1/plans/${plan.id}`, hub.apiKey)).body, { plan: { remintPolicy: 'rotating' } }, 'rotating by default');
      t.match(await redeem(`?accessId=${accessId}`), { status: 200, body: { apiKey: 'sk_many', maxKeys: 1 } });
      body = '{"apiKey":"sk_one"}';
      t.match(await redeem(`?accessId=${accessId}`), { status: 200, body: { maxKeys: 1 } }, 'also when the seller says nothing');

      const patched = await api.patch(`/v1/plans/${plan.id}`, hub.apiKey, { remintPolicy: 'additive' });
      t.match(patched, { status: 200, body: { plan: { remintPolicy: 'additive' } } });
      const additive = await redeem(`?accessId=${accessId}`);
      t.equal(additive.status, 200);
      t.notOk('maxKeys' in additive.body, 'additive: the seller’s own count, here none');
      body = '{"apiKey":"sk_many","maxKeys":5}';
      t.match(await redeem(`?accessId=${accessId}`), { status: 200, body: { maxKeys: 5 } });

      const refused = await api.patch(`/v1/plans/${plan.id}`, hub.apiKey, { remintPolicy: 'sometimes' });
      t.match(refused, { status: 400, body: { error: /^remintPolicy: / } }, 'an unknown policy is a 400 in the spec’s envelope');
      const created = await api.post('/v1/plans', hub.apiKey, {
        serviceId: (await db.plan.findUniqueOrThrow({ where: { id: plan.id } })).serviceId,
        name: 'Keys',
        slug: 'keys',
        billingMode: 'subscription',
        remintPolicy: 'rotate',
      });
      t.match(created, { status: 400, body: { error: /^remintPolicy: / } });
      await api.patch(`/v1/plans/${plan.id}`, hub.apiKey, { remintPolicy: 'rotating' });
    });
  });
}
