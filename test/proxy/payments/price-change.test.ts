import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import t from 'tap';
import { privateKeyToAccount } from 'viem/accounts';
import type { PaymentRequirements } from '../../../shared/payments/x402-wire.js';
import { testProviders } from '../../helpers/database.js';
import { startPaidWorld } from '../../helpers/paid-world.js';

const b64json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');

// The control-plane keeps a seller's catalog in memory while the seller is unchanged
// (control-plane/payments/payment-seller.ts): a price changed through the management API must
// still price the very next challenge, and the settlement of a challenge issued before it.
for (const provider of testProviders()) {
  t.test(`a price change reaches the next challenge and settlement on ${provider}`, async (t) => {
    const { api, db, hub, sellerId, payerKey, url } = await startPaidWorld(t, provider);
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: privateKeyToAccount(payerKey) });
    client.setSpendControls({ allowedAssets: true });

    const challenge = async (path: string) => {
      const res = await fetch(url(path));
      t.equal(res.status, 402);
      const body = (await res.json()) as { payment: { amountUsd: string }; accepts: PaymentRequirements[] };
      return { amountUsd: body.payment.amountUsd, requirements: body.accepts[0]! };
    };
    const pay = async (path: string, requirements: PaymentRequirements) => {
      const payment = await client.createPaymentPayload({ x402Version: 2, resource: { url: url(path) }, accepts: [requirements] } as never);
      const res = await fetch(url(path), { headers: { 'payment-signature': b64json(payment) } });
      t.equal(res.status, 200);
      return JSON.parse(res.headers.get('hub-billing') ?? '{}') as Record<string, string>;
    };
    // A catalog loaded within two seconds of the seller's last change is not kept; stamping the
    // change further back makes each step below answer from memory unless the change is noticed.
    let minutesAgo = 60;
    const changedLongAgo = () =>
      db.seller.update({ where: { id: sellerId }, data: { updatedAt: new Date(Date.now() - minutesAgo-- * 60_000) } });
    const setPrice = async (priceUsd: string) => {
      const reply = await api.patch(`/v1/plan-meter-prices/pmp_${'s'.repeat(24)}`, hub.apiKey, { priceUsd });
      t.equal(reply.status, 200, `price set to ${priceUsd}`);
      await changedLongAgo();
    };

    await changedLongAgo();
    const before = await challenge('/search?q=before');
    t.equal(before.amountUsd, '0.010000');
    t.match(await pay('/search?q=before', before.requirements), { status: 'settled', chargedUsd: '0.010000' });

    await setPrice('0.02');
    const after = await challenge('/search?q=after');
    t.equal(after.amountUsd, '0.020000', 'the next challenge has the new price');
    t.match(await pay('/search?q=after', after.requirements), { status: 'settled', chargedUsd: '0.020000' });

    // Three calls authorized at $0.02, one used, and the price halved before the paid retry: the
    // settlement charges the price of the moment, as it reads it from the catalog.
    const three = await challenge('/three');
    t.equal(three.amountUsd, '0.060000');
    await setPrice('0.01');
    t.match(await pay('/three', three.requirements), { status: 'settled', authorizedUsd: '0.060000', chargedUsd: '0.010000' });
  });
}
