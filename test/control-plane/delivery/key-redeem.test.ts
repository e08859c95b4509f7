import pino from 'pino';
import t from 'tap';
import { setStatefulFlags } from '../../../control-plane/catalog/sellers.js';
import { AccountWriteWorker } from '../../../control-plane/delivery/account-write-worker.js';
import { createSellerApp } from '../../../examples/seller/app.js';
import { closeServer, listen } from '../../../runtime/http-server.js';
import { createReplyKey, decryptReply, encryptRequest, fetchJwks } from '../../../sdk/encryption.js';
import type { PaymentRequirements } from '../../../shared/payments/x402-wire.js';
import { registerAgent } from '../../helpers/agents.js';
import { testProviders } from '../../helpers/database.js';
import { addEncryptionKey, craftJwe, jwksListing, retireEncryptionKey } from '../../helpers/encryption.js';
import { startPaidWorld } from '../../helpers/paid-world.js';
import { signPayment } from '../../helpers/sign-payment.js';

// The stateful path end to end with the reference seller (examples/seller) as the account
// endpoint: purchase → account write → active → POST /keys/redeem → the key works against the
// seller's own API. Then every answer a mint can get, and the refusals made before asking.

const b64json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');

for (const provider of testProviders()) {
  t.test(`key redeem on ${provider}`, async (t) => {
    const { hub, chain, db, api, payerKey, url, sellerId, rail, secretOf, offerPlan } = await startPaidWorld(t, provider);
    const app = createSellerApp({ secrets: secretOf, hub: { baseUrl: hub.cp.url, apiKey: hub.apiKey }, serviceSlug: 'search' });
    const port = await listen(app, 0, '127.0.0.1');
    t.teardown(() => closeServer(app, 100));
    const sellerApi = `http://127.0.0.1:${port}`;
    const worker = new AccountWriteWorker(db, hub.cp.masterKey, rail, pino({ level: 'silent' }), { pollMs: 60_000 });
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
        [{ status: 503, body: '{"error":"service_unavailable"}' }, 502, { error: 'key_mint_failed', reason: /answered 503/ }],
        [{ status: 200, body: 'not json' }, 502, { error: 'key_mint_failed' }],
        [{ status: 200, body: 'null' }, 502, { error: 'key_mint_failed', reason: /answered 200/ }],
        [{ status: 200, body: '"sk_live"' }, 502, { error: 'key_mint_failed', reason: /answered 200/ }],
        // Past the seller's 7 s budget: the real one, since the mint is the agent's own request.
        [
          { status: 200, body: '{"apiKey":"too_late"}', delayMs: 7_300 },
          502,
          { error: 'key_mint_failed', reason: /did not answer: no answer within 7000 ms/ },
        ],
      ];
      for (const [given, status, expected] of cases) {
        reply = given;
        t.match(await redeem(`?accessId=${accessId}`), { status, body: expected }, given.body);
      }
    });
  });
}
