import { Receipt as MppxReceipt } from 'mppx';
import { evm, Mppx } from 'mppx/client';
import t from 'tap';
import { privateKeyToAccount } from 'viem/accounts';
import { tokenBalance } from '../../helpers/chain.js';
import { testProviders } from '../../helpers/database.js';
import { startPaidWorld } from '../../helpers/paid-world.js';

for (const provider of testProviders()) {
  t.test(`MPP pay per call on ${provider}`, async (t) => {
    const { chain, payTo, payerKey, served, paymentHeadersSeen, url, db } = await startPaidWorld(t, provider);
    const payer = privateKeyToAccount(payerKey);
    // mppx takes the token's EIP-712 domain from its own configuration (hub also sends it).
    const mppx = Mppx.create({
      methods: [evm({ account: payer, authorization: { name: chain.token.name, version: chain.token.version } })],
      polyfill: false,
    });

    await t.test('the unmodified mppx client pays; billing headers and a receipt mppx accepts; tokens move', async (t) => {
      const before = { payer: await tokenBalance(chain, payer.address), payTo: await tokenBalance(chain, payTo) };
      const res = await mppx.fetch(url('/search?q=mpp'), {
        method: 'POST',
        body: '{"q":"mpp"}',
        headers: { 'content-type': 'application/json' },
      });
      t.equal(res.status, 200);
      t.match(await res.json(), { results: ['a', 'b'], agent: /^agt_/ });
      const billing = JSON.parse(res.headers.get('hub-billing') ?? '{}');
      t.match(billing, { status: 'settled', authorizedUsd: '0.010000', chargedUsd: '0.010000', settleTransactionHash: /^0x[0-9a-f]{64}$/ });
      const receipt = MppxReceipt.fromResponse(res);
      t.match(receipt, { status: 'success', reference: billing.settleTransactionHash });
      t.equal(res.headers.get('payment-response'), null, 'MPP answers carry the MPP receipt, not x402’s');
      t.equal(await tokenBalance(chain, payer.address), before.payer - 10_000n);
      t.equal(await tokenBalance(chain, payTo), before.payTo + 10_000n);
      t.same(paymentHeadersSeen, [], 'the credential never reaches the seller');
      const attempt = await db.paymentAttempt.findFirst({ where: { pathAndQuery: '/search?q=mpp' } });
      t.equal(attempt?.protocol, 'mpp');
      t.equal(attempt?.paymentMethod, 'mpp_wallet', 'an MPP payment never reads x402_wallet');
    });

    await t.test('the credential is accepted as Bearer and as Payment-Authorization, once', async (t) => {
      const challenge = await fetch(url('/search?q=carriers'), { method: 'POST', body: 'b' });
      t.equal(challenge.status, 402);
      const credential = (await mppx.createCredential(challenge)).slice('Payment '.length);
      const servedBefore = served.length;
      const paid = await fetch(url('/search?q=carriers'), {
        method: 'POST',
        body: 'b',
        headers: { authorization: `Bearer ${credential}` },
      });
      t.equal(paid.status, 200, 'Authorization: Bearer <credential>');
      t.ok(paid.headers.get('payment-receipt'));
      const again = await fetch(url('/search?q=carriers'), { method: 'POST', body: 'b', headers: { 'payment-authorization': credential } });
      t.equal(again.status, 409);
      t.same(await again.json(), { error: 'payment_request_already_completed' });
      t.equal(served.length - servedBefore, 1);
    });

    await t.test('a changed body, a forged challenge and garbage are refused before forwarding', async (t) => {
      const challenge = await fetch(url('/search?q=bind'), { method: 'POST', body: 'one' });
      const credential = await mppx.createCredential(challenge);
      const servedBefore = served.length;
      const changed = await fetch(url('/search?q=bind'), { method: 'POST', body: 'two', headers: { authorization: credential } });
      t.equal(changed.status, 409);
      t.same(await changed.json(), { error: 'payment_request_mismatch' });

      const forgedHeader = (challenge.headers.get('www-authenticate') ?? '').replace(/id="[^"]+"/, 'id="forged"');
      const forged = await mppx.createCredential(new Response(null, { status: 402, headers: { 'www-authenticate': forgedHeader } }));
      const refused = await fetch(url('/search?q=bind'), { method: 'POST', body: 'one', headers: { authorization: forged } });
      t.equal(refused.status, 402);
      t.match(await refused.json(), { error: 'payment_required', reason: 'settlement_failed', settlementReason: 'unknown_challenge' });

      const garbage = await fetch(url('/search?q=bind'), { method: 'POST', body: 'one', headers: { authorization: 'Payment !!!' } });
      t.equal(garbage.status, 400);
      t.match(await garbage.json(), { error: 'invalid_request', reason: /Malformed payment header/ });
      t.equal(served.length, servedBefore);
    });
  });
}
