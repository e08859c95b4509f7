import { randomBytes } from 'node:crypto';
import t from 'tap';
import { accountWriteBody, parseSnapshot } from '../../../control-plane/storefront/account-write.js';
import { applyAccountWrite } from '../../../sdk/account/netting.js';
import { parseAccountWrite } from '../../../sdk/account/write-body.js';
import { newId } from '../../../shared/ids.js';
import { callHub, cardEnv, chargeObject, disputeObject, providerApi, signedEvent } from '../../helpers/card-provider.js';
import { startTestControlPlane, type TestControlPlane } from '../../helpers/control-plane.js';
import { testProviders } from '../../helpers/database.js';

// Spec: Account write body › state.creditReversedUsd ("Total ever pulled back by card refunds and
// chargebacks, cumulative"); the seller's SDK nets granted − reversed and clamps at zero.

const HOOK = '/webhooks/stripe';

/** A stateful seller's credit account bought by card for $20 (a card payment on its connected account). */
async function cardBoughtAccount(cp: TestControlPlane) {
  const boot = await cp.bootstrap();
  const db = cp.db;
  const sellerId = newId('seller');
  await db.seller.create({
    data: {
      id: sellerId,
      organizationId: boot.organizationId,
      name: 'Weather',
      slug: `weather-${randomBytes(3).toString('hex')}`,
      upstreamBaseUrl: 'http://127.0.0.1:9/api',
      stateful: true,
      cardAccountId: 'acct_1TestSeller',
    },
  });
  const serviceId = newId('service');
  await db.service.create({ data: { id: serviceId, sellerId, organizationId: boot.organizationId, name: 'Forecast', slug: 'forecast' } });
  const planId = newId('plan');
  await db.plan.create({
    data: {
      id: planId,
      organizationId: boot.organizationId,
      serviceId,
      name: 'Credit',
      slug: 'credit',
      billingMode: 'credit',
      interval: 'none',
      verifiedEmailPolicy: 'off',
    },
  });
  const agentId = newId('agent');
  await db.agent.create({ data: { id: agentId, walletAddress: `0x${randomBytes(20).toString('hex')}` } });
  const accessId = newId('access');
  await db.access.create({
    data: {
      id: accessId,
      sellerId,
      planId,
      agentId,
      status: 'active',
      periodStart: new Date(),
      stateVersion: 1,
      creditGrantedMicros: 20_000_000n,
      balanceMicros: 20_000_000n,
    },
  });
  const paymentId = `pi_${randomBytes(12).toString('hex')}`;
  await db.cardPayment.create({
    data: { id: paymentId, sellerId, accessId, cardAccountId: 'acct_1TestSeller', amountMicros: 20_000_000n, status: 'succeeded' },
  });
  return { accessId, paymentId };
}

const charge = (paymentId: string, refundedCents: number) => chargeObject(paymentId, 2000, refundedCents);
const dispute = (paymentId: string, status: string, amountCents: number) => disputeObject(paymentId, status, amountCents);

/** The seller's SDK applying every write the account has had, in order: its balance after them. */
async function sellerSees(cp: TestControlPlane, accessId: string) {
  const writes = await cp.db.accountWrite.findMany({ where: { accessId, kind: 'write' }, orderBy: { stateVersion: 'asc' } });
  let account: ReturnType<typeof applyAccountWrite>['account'] | undefined;
  let last: Record<string, any> = {};
  for (const write of writes) {
    last = accountWriteBody(parseSnapshot(write.bodyJson), 'original') as Record<string, any>;
    const parsed = parseAccountWrite(JSON.parse(JSON.stringify(last)));
    if (!parsed.ok) throw new Error(parsed.message);
    account = applyAccountWrite(account, parsed.value).account;
  }
  return { writes: writes.length, body: last, account };
}

for (const provider of testProviders()) {
  t.test(`${provider}: refunds and a lost dispute raise creditReversedUsd, in the write and in the SDK's balance`, async (t) => {
    const env = cardEnv();
    const cp = await startTestControlPlane(t, provider, env);
    const { accessId, paymentId } = await cardBoughtAccount(cp);
    const send = (id: string, type: string, object: Record<string, unknown>) => {
      const { payload, signature } = signedEvent(env.HUB_STRIPE_WEBHOOK_SECRET, { id, type, object, account: 'acct_1TestSeller' });
      return callHub(cp.url, 'POST', HOOK, {
        raw: payload,
        headers: { 'stripe-signature': signature, 'content-type': 'application/json' },
      });
    };

    // A partial refund of $5.
    const first = await send('evt_1Refund5', 'charge.refunded', charge(paymentId, 500));
    t.match(first, { status: 200, body: { received: true, duplicate: false } });
    let seen = await sellerSees(cp, accessId);
    t.equal(seen.writes, 1);
    t.equal(seen.body.state.creditReversedUsd, '5.000000');
    t.equal(seen.body.state.creditGrantedUsd, '20.000000');
    t.equal(seen.account?.balanceMicros, 15_000_000n, 'the SDK nets 20 − 5');

    // The same event again (the provider redelivers): 200, nothing new.
    const again = await send('evt_1Refund5', 'charge.refunded', charge(paymentId, 500));
    t.match(again, { status: 200, body: { duplicate: true } });
    t.equal((await sellerSees(cp, accessId)).writes, 1, 'no second write');

    // A dispute opened reverses nothing yet; lost, it reverses its $15, once.
    await send('evt_2DisputeOpen', 'charge.dispute.created', dispute(paymentId, 'needs_response', 1500));
    t.equal((await sellerSees(cp, accessId)).writes, 1, 'an open dispute sends nothing');
    await send('evt_3DisputeLost', 'charge.dispute.closed', dispute(paymentId, 'lost', 1500));
    seen = await sellerSees(cp, accessId);
    t.equal(seen.writes, 2);
    t.equal(seen.body.state.creditReversedUsd, '20.000000', 'cumulative: 5 refunded + 15 lost');
    t.equal(seen.account?.balanceMicros, 0n);
    const access = await cp.db.access.findUniqueOrThrow({ where: { id: accessId } });
    t.equal(access.creditReversedMicros, 20_000_000n);
    t.equal(access.balanceMicros, 0n);
    t.equal(access.stateVersion, 3);

    // A later event naming a larger cumulative refund adds only the difference; one for a payment
    // hub did not take changes nothing.
    await send('evt_4RefundAll', 'charge.refunded', charge(paymentId, 2000));
    seen = await sellerSees(cp, accessId);
    t.equal(seen.body.state.creditReversedUsd, '35.000000');
    t.equal(seen.account?.balanceMicros, 0n, 'the SDK clamps at zero');
    const stranger = await send('evt_5Stranger', 'charge.refunded', charge('pi_notHubs', 2000));
    t.equal(stranger.status, 200);
    t.equal((await sellerSees(cp, accessId)).writes, 3);
  });

  t.test(`${provider}: a forged, stale or unsigned event is refused and changes nothing`, async (t) => {
    const env = cardEnv();
    const cp = await startTestControlPlane(t, provider, env);
    const { accessId, paymentId } = await cardBoughtAccount(cp);
    const object = charge(paymentId, 2000);
    const forged = signedEvent(`whsec_${randomBytes(16).toString('hex')}`, { id: 'evt_forged', type: 'charge.refunded', object });
    const genuine = signedEvent(env.HUB_STRIPE_WEBHOOK_SECRET, { id: 'evt_tampered', type: 'charge.refunded', object });
    const cases: [string, string, Record<string, string>][] = [
      ['signed with another secret', forged.payload, { 'stripe-signature': forged.signature }],
      [
        'a body changed after signing',
        genuine.payload.replace('"amount_refunded":2000', '"amount_refunded":1'),
        { 'stripe-signature': genuine.signature },
      ],
      ['no signature', genuine.payload, {}],
      ['a signature too old', genuine.payload, { 'stripe-signature': genuine.signature.replace(/t=\d+/, 't=1000000000') }],
    ];
    for (const [label, raw, headers] of cases) {
      const reply = await callHub(cp.url, 'POST', HOOK, { raw, headers });
      t.match(reply, { status: 400, body: { error: 'invalid_webhook_signature' } }, label);
    }
    t.equal(await cp.db.providerEvent.count(), 0, 'no event recorded');
    t.equal((await cp.db.access.findUniqueOrThrow({ where: { id: accessId } })).creditReversedMicros, 0n);
  });

  t.test(`${provider}: account-link creates the connected account once and returns the onboarding link`, async (t) => {
    const cp = await startTestControlPlane(t, provider, cardEnv({ HUB_STRIPE_MAX_RETRIES: '1' }));
    const boot = await cp.bootstrap();
    const seller = await callHub(cp.url, 'POST', '/v1/sellers', {
      token: boot.apiKey,
      body: { name: 'Weather', slug: `w-${randomBytes(3).toString('hex')}`, upstreamBaseUrl: 'http://127.0.0.1:9/api' },
    });
    const sellerId = seller.body.seller.id as string;
    const stripe = providerApi(t);
    const keys: string[] = [];
    const accountBody = {
      id: 'acct_1NewSeller',
      object: 'account',
      type: 'standard',
      charges_enabled: false,
      details_submitted: false,
      metadata: { hubSellerId: sellerId },
    };
    // The first try fails on the provider's side; the SDK's retry carries the same idempotency key.
    let tries = 0;
    stripe
      .post('/v1/accounts', (body) => body.type === 'standard' && body['metadata[hubSellerId]'] === sellerId)
      .matchHeader('idempotency-key', (key) => {
        keys.push(key);
        return true;
      })
      .times(2)
      .reply(() => (++tries === 1 ? [500, { error: { type: 'api_error', message: 'try again' } }] : [200, accountBody]));
    const expires = Math.floor(Date.now() / 1000) + 300;
    const link = (url: string) => ({ object: 'account_link', created: expires - 300, expires_at: expires, url });
    stripe
      .post('/v1/account_links', {
        account: 'acct_1NewSeller',
        type: 'account_onboarding',
        return_url: 'https://seller.example.com/done',
        refresh_url: 'https://seller.example.com/again',
      })
      .matchHeader('idempotency-key', /^hub-account-link-sel_/)
      .times(2)
      .reply(200, link('https://connect.stripe.com/setup/s/acct_1NewSeller/abc'));
    const body = { sellerId, returnUrl: 'https://seller.example.com/done', refreshUrl: 'https://seller.example.com/again' };
    const created = await callHub(cp.url, 'POST', '/v1/stripe-connect/account-link', { token: boot.apiKey, body });
    t.equal(created.status, 200, JSON.stringify(created.body));
    t.same(created.body, {
      url: 'https://connect.stripe.com/setup/s/acct_1NewSeller/abc',
      expiresAt: new Date(expires * 1000).toISOString(),
      accountId: 'acct_1NewSeller',
      chargesEnabled: false,
    });
    t.equal(tries, 2, 'tried twice');
    t.same([...new Set(keys)], [`hub-connect-account-${sellerId}`], 'the retry reuses the idempotency key: one account');
    // Asked again (a session this time): no second account, a new link.
    const again = await callHub(cp.url, 'POST', '/v1/stripe-connect/account-link', { token: boot.sessionToken, body });
    t.equal(again.status, 200);
    t.equal(again.body.accountId, 'acct_1NewSeller');
    t.ok(stripe.isDone());

    // The provider's account.updated turns card payments on for the seller.
    const env = cp.config.cardPayments!;
    const { payload, signature } = signedEvent(env.webhookSecrets[0]!, {
      id: 'evt_acct',
      type: 'account.updated',
      object: { ...accountBody, charges_enabled: true, details_submitted: true },
      account: 'acct_1NewSeller',
    });
    t.equal((await callHub(cp.url, 'POST', HOOK, { raw: payload, headers: { 'stripe-signature': signature } })).status, 200);
    t.equal((await cp.db.seller.findUniqueOrThrow({ where: { id: sellerId } })).cardChargesEnabled, true);

    const bad = await callHub(cp.url, 'POST', '/v1/stripe-connect/account-link', {
      token: boot.apiKey,
      body: { ...body, returnUrl: 'javascript:alert(1)' },
    });
    t.equal(bad.status, 400);
    t.match(bad.body.error, /returnUrl/);
    const plainHttp = await callHub(cp.url, 'POST', '/v1/stripe-connect/account-link', {
      token: boot.apiKey,
      body: { ...body, refreshUrl: 'http://seller.example.com/again' },
    });
    t.equal(plainHttp.status, 400);
    const otherSeller = await callHub(cp.url, 'POST', '/v1/stripe-connect/account-link', {
      token: boot.apiKey,
      body: { ...body, sellerId: newId('seller') },
    });
    t.match(otherSeller, { status: 404, body: { error: 'seller_not_found' } });
  });
}
