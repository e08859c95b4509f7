import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import t from 'tap';
import { privateKeyToAccount } from 'viem/accounts';
import { createReplyKey, decryptReply, encryptRequest, fetchJwks } from '../../../sdk/encryption.js';
import type { PaymentRequirements } from '../../../shared/payments/x402-wire.js';
import { tokenBalance } from '../../helpers/chain.js';
import { testProviders } from '../../helpers/database.js';
import { addEncryptionKey, jwksListing, retireEncryptionKey } from '../../helpers/encryption.js';
import { startPaidWorld } from '../../helpers/paid-world.js';

// A paid call with an encrypted body, paid by the official x402 client, unmodified: its paid
// retry resends the same JWE, which is what the payment binds to. The JWE is checked before any
// payment is asked, and the billing headers stay outside the encryption.

const JOSE = { 'content-type': 'application/jose' };
const b64json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');

for (const provider of testProviders()) {
  t.test(`an encrypted paid call on ${provider}`, async (t) => {
    const { api, chain, hub, payerKey, sellerId, url } = await startPaidWorld(t, provider);
    const payer = privateKeyToAccount(payerKey);
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: payer });
    client.setSpendControls({ allowedAssets: true });
    const payingFetch = wrapFetchWithPayment(fetch, client);
    const kid = await addEncryptionKey(api, hub.apiKey, sellerId);
    const jwks = await jwksListing(() => fetchJwks(url('/')), [kid]);
    const replyKey = await createReplyKey();
    const sealed = (plaintext: string) => encryptRequest(jwks, plaintext, { replyKey, contentType: 'application/json' });

    await t.test('the unmodified x402 client pays; the reply is encrypted, the billing is not', async (t) => {
      const before = await tokenBalance(chain, payer.address);
      const res = await payingFetch(url('/search?q=secret'), { method: 'POST', headers: JOSE, body: await sealed('{"q":"secret"}') });
      t.equal(res.status, 200);
      t.equal(res.headers.get('content-type'), 'application/jose');
      const billing = JSON.parse(res.headers.get('hub-billing') ?? '{}');
      t.match(billing, { status: 'settled', chargedUsd: '0.010000', settleTransactionHash: /^0x[0-9a-f]{64}$/ });
      t.match(JSON.parse(Buffer.from(res.headers.get('payment-response') ?? '', 'base64').toString()), {
        success: true,
        transaction: billing.settleTransactionHash,
      });
      const reply = await decryptReply(await res.text(), replyKey);
      t.same(JSON.parse(new TextDecoder().decode(reply.plaintext)).results, ['a', 'b']);
      t.equal(before - (await tokenBalance(chain, payer.address)), 10_000n, 'one cent moved on chain');
    });

    /** An unpaid encrypted call: the 402 and the requirements it carries. */
    const challenge = async (path: string, body: string) => {
      const res = await fetch(url(path), { method: 'POST', headers: JOSE, body });
      t.equal(res.status, 402);
      const { accepts } = (await res.json()) as { accepts: PaymentRequirements[] };
      return client.createPaymentPayload({ x402Version: 2, resource: { url: url(path) }, accepts } as never);
    };
    const paidRetry = (path: string, payment: unknown, body: string) =>
      fetch(url(path), { method: 'POST', headers: { ...JOSE, 'payment-signature': b64json(payment) }, body });

    await t.test('a JWE refusal comes before any payment is asked', async (t) => {
      const res = await fetch(url('/search'), { method: 'POST', headers: JOSE, body: 'a.b.c' });
      t.equal(res.status, 400);
      t.equal(((await res.json()) as { error: string }).error, 'invalid_compact_jwe');
      t.notOk(res.headers.get('payment-required'));
    });

    await t.test('the payment binds to the JWE: the same plaintext encrypted again is another request', async (t) => {
      const first = await sealed('{"q":"bound"}');
      const payment = await challenge('/search?q=bound', first);
      const again = await paidRetry('/search?q=bound', payment, await sealed('{"q":"bound"}'));
      t.same([again.status, await again.json()], [409, { error: 'payment_request_mismatch' }]);
      const paid = await paidRetry('/search?q=bound', payment, first);
      t.equal(paid.status, 200, 'the same JWE is served');
      t.match(JSON.parse(paid.headers.get('hub-billing') ?? '{}'), { status: 'settled' });
    });

    await t.test('a key retired between the challenge and the paid retry: refused, and nothing is paid', async (t) => {
      const newer = await addEncryptionKey(api, hub.apiKey, sellerId);
      const both = await jwksListing(() => fetchJwks(url('/')), [newer, kid]);
      const body = await encryptRequest(both, '{"q":"late"}', { replyKey, kid, contentType: 'application/json' });
      const payment = await challenge('/search?q=late', body);
      await retireEncryptionKey(api, hub.apiKey, sellerId, kid);
      await jwksListing(() => fetchJwks(url('/')), [newer]);
      const before = await tokenBalance(chain, payer.address);
      const res = await paidRetry('/search?q=late', payment, body);
      t.match([res.status, await res.json()], [400, { error: 'unknown_jwe_kid' }]);
      t.notOk(res.headers.get('hub-billing'));
      t.equal(await tokenBalance(chain, payer.address), before, 'the authorization was never submitted');
    });
  });
}
