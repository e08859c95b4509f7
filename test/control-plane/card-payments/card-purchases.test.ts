import { Challenge } from 'mppx';
import { Mppx, stripe as stripeMethod } from 'mppx/client';
import type nock from 'nock';
import pino from 'pino';
import t from 'tap';
import { fetch as undiciFetch } from 'undici';
import { requestCardRefunds } from '../../../control-plane/card-payments/card-refunds.js';
import { AccountWriteWorker } from '../../../control-plane/delivery/account-write-worker.js';
import { localhostDispatcher } from '../../../runtime/localhost-dispatcher.js';
import { parseReceipt } from '../../../shared/payments/mpp/index.js';
import { FAST_DELIVERY, startAccountReceiver } from '../../helpers/account-receiver.js';
import { registerAgent } from '../../helpers/agents.js';
import {
  callHub,
  cardEnv,
  chargeObject,
  DECLINED,
  disputeObject,
  paymentIntentObject,
  providerApi,
  refundObject,
  signedEvent,
} from '../../helpers/card-provider.js';
import { testProviders } from '../../helpers/database.js';
import { startPaidWorld } from '../../helpers/paid-world.js';

// Card payments at the pay URL (docs/decisions.md#D-245, D-257 … D-260): the unmodified mppx client
// pays plan purchases and top-ups with its `stripe` method (a shared payment token), hub charges
// it on the seller's connected account, the account write reaches the seller's receiver (the
// SDK's endpoint), and the provider's refund and dispute events net out of the SDK's balance.
// The provider's HTTP API is nock (its documented objects, bodies and keys asserted); the seller's
// onboarding, the purchases and every event go through hub's own interfaces.

type Json = Record<string, any>;
const silent = pino({ level: 'silent' });
const ACCOUNT = 'acct_1CardSeller';
const SPT_VERSION = '2026-07-29.preview';

/**
 * Requests to hub beside nock: undici's own fetch through a dispatcher of the test's own (pay hosts
 * resolved to loopback), which nock does not intercept (test/helpers/faults.ts).
 */
const loopback = localhostDispatcher();
const plainFetch = ((input: string, init?: RequestInit) =>
  undiciFetch(input, { ...(init as object), dispatcher: loopback } as never)) as unknown as typeof fetch;

/** What a provider call carried: its form body, and the headers hub's keys and account ride in. */
type Seen = { body: Json; key: string; account: string | undefined; version: string | undefined };

for (const provider of testProviders()) {
  t.test(`${provider}: card purchases and top-ups at the pay URL`, async (t) => {
    const env = cardEnv();
    const world = await startPaidWorld(t, provider, { env });
    const { hub, db, url, secretOf, offerPlan, becomeStateful, sellerId } = world;
    const receiver = await startAccountReceiver(t, secretOf);
    await becomeStateful(receiver.url);
    const credits = await offerPlan({ name: 'Credits', slug: 'credits', billingMode: 'credit', minimumPurchaseUsd: '0.10' });
    const agent = await registerAgent(hub, 'acme');
    const bearer = { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' };
    const worker = () =>
      new AccountWriteWorker(db, hub.cp.masterKey, { live: world.rail }, silent, {
        schedule: FAST_DELIVERY,
        pollMs: 60_000,
        cards: hub.cp.config.cardPayments!,
      });
    const unpaid = (body: Json, query = '') =>
      plainFetch(url(`/extend${query}`), { method: 'POST', headers: bearer, body: JSON.stringify(body) });
    const methodsOffered = async (res: Response) => {
      t.equal(res.status, 402);
      await res.arrayBuffer();
      return Challenge.deserializeList(res.headers.get('www-authenticate')!).map((c) => c.method);
    };
    const hook = async (id: string, type: string, object: Json) => {
      const { payload, signature } = signedEvent(env.HUB_STRIPE_WEBHOOK_SECRET, { id, type, object, account: ACCOUNT });
      const reply = await callHub(hub.cp.url, 'POST', '/webhooks/stripe', { raw: payload, headers: { 'stripe-signature': signature } });
      if (reply.status !== 200) throw new Error(`webhook ${type}: ${reply.status} ${JSON.stringify(reply.body)}`);
    };

    // The agent's wallet grants a token for what the challenge asks (here: hands out a fresh one).
    const tokenAsks: Json[] = [];
    const sent: string[] = [];
    const mppx = Mppx.create({
      polyfill: false,
      fetch: ((input: string, init?: RequestInit) => {
        const authorization = new Headers(init?.headers).get('authorization');
        if (authorization?.startsWith('Payment ')) sent.push(authorization);
        return plainFetch(input, init);
      }) as typeof fetch,
      methods: [
        stripeMethod({
          paymentMethod: 'pm_card_visa',
          createToken: async ({ amount, currency, networkId, expiresAt }) => {
            tokenAsks.push({ amount, currency, networkId, expiresAt });
            return `spt_1Test${tokenAsks.length}${'x'.repeat(12)}`;
          },
        }),
      ],
    });
    const payByCard = (body: Json, query = '') =>
      mppx.fetch(url(`/extend${query}`), { method: 'POST', headers: bearer, body: JSON.stringify(body) });

    await t.test('a seller that has not onboarded offers no card', async (t) => {
      t.same(await methodsOffered(await unpaid({ planId: credits, amountUsd: '5.00' })), ['evm']);
    });

    const stripe: nock.Scope = providerApi(t);
    const charges: Seen[] = [];
    /**
     * The provider's next answers to `POST /v1/payment_intents`, in order; each call's body is
     * recorded, and (when it is answered) the headers hub's key, account and version ride in.
     */
    const chargeAnswers = (...answers: (((body: Json) => [number, unknown]) | [number, Json] | 'timeout')[]) => {
      for (const answer of answers) {
        const interceptor = stripe.post('/v1/payment_intents', (body) => {
          charges.push({ body, key: '', account: undefined, version: undefined });
          return true;
        });
        // A timeout is a socket error: nock cannot hold a mocked socket idle past the SDK's timer (D-244).
        if (answer === 'timeout') interceptor.replyWithError('socket timed out');
        else if (Array.isArray(answer)) interceptor.reply(answer[0], answer[1]);
        else
          interceptor.reply((request) => {
            const seen = charges.at(-1)!;
            seen.key = String(request.headers.get('idempotency-key'));
            seen.account = String(request.headers.get('stripe-account'));
            seen.version = String(request.headers.get('stripe-version'));
            return answer(seen.body);
          });
      }
    };
    const succeeded = (id: string) => (body: Json) =>
      [200, paymentIntentObject(id, { amount: Number(body.amount), metadata: { hubPaymentId: body['metadata[hubPaymentId]'] } })] as [
        number,
        unknown,
      ];

    await t.test('onboarding through hub turns cards on for the seller', async (t) => {
      stripe
        .post('/v1/accounts', (body) => body.type === 'standard' && body['metadata[hubSellerId]'] === sellerId)
        .reply(200, { id: ACCOUNT, object: 'account', type: 'standard', charges_enabled: false, details_submitted: false });
      stripe.post('/v1/account_links').reply(200, {
        object: 'account_link',
        created: Math.floor(Date.now() / 1000),
        expires_at: Math.floor(Date.now() / 1000) + 300,
        url: `https://connect.stripe.com/setup/s/${ACCOUNT}/abc`,
      });
      const link = await callHub(hub.cp.url, 'POST', '/v1/stripe-connect/account-link', {
        token: hub.apiKey,
        body: { sellerId, returnUrl: 'https://seller.example.com/done', refreshUrl: 'https://seller.example.com/again' },
      });
      t.match(link, { status: 200, body: { accountId: ACCOUNT, chargesEnabled: false } });
      t.same(await methodsOffered(await unpaid({ planId: credits, amountUsd: '5.00' })), ['evm'], 'not before the provider says so');
      await hook('evt_acct_on', 'account.updated', { id: ACCOUNT, object: 'account', charges_enabled: true, details_submitted: true });
      // The proxy's 402 is priced by the control-plane at every ask: no cache to wait for.
      t.same(await methodsOffered(await unpaid({ planId: credits, amountUsd: '5.00' })), ['evm', 'stripe']);
      t.same(await methodsOffered(await unpaid({ planId: credits, amountUsd: '0.40' })), ['evm'], 'below the $0.50 minimum: no card');
      t.ok(stripe.isDone());
    });

    let accessId = '';
    const purchasePi = 'pi_3TestPurchase0001';
    await t.test('the mppx client buys $5.00 of credit by card; the write reaches the seller', async (t) => {
      chargeAnswers(succeeded(purchasePi));
      const res = await payByCard({ planId: credits, amountUsd: '5.00' });
      const body = (await res.json()) as Json;
      t.equal(res.status, 201, JSON.stringify(body));
      t.match(body, {
        status: 'pending',
        account: { accessId: /^hubacc_/, agentId: agent.agentId, creditGrantedUsd: '5.000000', balanceUsd: '5.000000', stateVersion: 1 },
        payment: { id: /^apay_/, amountUsd: '5.000000', status: 'settled', settleTransactionHash: null },
      });
      accessId = body.account.accessId;
      const receipt = parseReceipt(res.headers.get('payment-receipt'));
      t.match(receipt, { ok: true, value: { method: 'stripe', reference: purchasePi, status: 'success' } });
      t.match(JSON.parse(res.headers.get('hub-billing')!), { status: 'settled', chargedUsd: '5.000000', settleTransactionHash: null });
      t.match(tokenAsks.at(-1), { amount: '500', currency: 'usd', networkId: ACCOUNT });
      t.same(charges.at(-1), {
        body: {
          amount: '500',
          currency: 'usd',
          confirm: 'true',
          'automatic_payment_methods[enabled]': 'true',
          'automatic_payment_methods[allow_redirects]': 'never',
          shared_payment_granted_token: 'spt_1Test1xxxxxxxxxxxx',
          'metadata[hubPaymentId]': body.payment.id,
          'metadata[hubSellerId]': sellerId,
          'metadata[hubPurchase]': 'purchase',
        },
        key: `hub-card-${body.payment.id}`,
        account: ACCOUNT,
        version: SPT_VERSION,
      });
      t.match(await db.cardPayment.findUniqueOrThrow({ where: { id: purchasePi } }), {
        accessId,
        paymentAttemptId: body.payment.id,
        cardAccountId: ACCOUNT,
        amountMicros: 5_000_000n,
        status: 'succeeded',
      });
      await worker().runOnce();
      t.match(await receiver.store.get(accessId), { stateVersion: 1, balanceMicros: 5_000_000n }, "the seller's SDK has the credit");
    });

    const topUpPi = 'pi_3TestTopUp0002';
    await t.test('a top-up by card extends the same account', async (t) => {
      chargeAnswers(succeeded(topUpPi));
      const res = await payByCard({ amountUsd: '2.00' }, `?accessId=${accessId}`);
      t.equal(res.status, 201);
      t.match(await res.json(), { account: { accessId, creditGrantedUsd: '7.000000', stateVersion: 2 } });
      t.match(charges.at(-1), { body: { amount: '200', 'metadata[hubPurchase]': 'topup' }, account: ACCOUNT });
      await worker().runOnce();
      t.match(await receiver.store.get(accessId), { stateVersion: 2, balanceMicros: 7_000_000n });
    });

    await t.test("a refund and a lost dispute raise creditReversedUsd, and the seller's SDK nets them", async (t) => {
      await hook('evt_refund_1', 'charge.refunded', chargeObject(purchasePi, 500, 150, 'ch_3TestPurchase0001'));
      await worker().runOnce();
      t.match(await receiver.store.get(accessId), { stateVersion: 3, balanceMicros: 5_500_000n });
      await hook('evt_dispute_1', 'charge.dispute.closed', disputeObject(topUpPi, 'lost', 200, 'ch_3TestTopUp0002'));
      await worker().runOnce();
      const write = await db.accountWrite.findFirstOrThrow({ where: { accessId }, orderBy: { stateVersion: 'desc' } });
      t.match(JSON.parse(write.bodyJson), { stateVersion: 4 });
      t.match(await receiver.store.get(accessId), { stateVersion: 4, balanceMicros: 3_500_000n }, '7.00 − 1.50 − 2.00');
      const view = await callHub(hub.cp.url, 'GET', `/v1/accounts/${accessId}`, { token: hub.apiKey });
      t.match(view.body, { account: { creditReversedUsd: '3.500000' } });
    });

    /** The last card credential the client sent, sent again as it was (an agent retrying). */
    const sendAgain = (query: string, body: Json) =>
      plainFetch(url(`/extend${query}`), {
        method: 'POST',
        headers: { ...bearer, authorization: sent.at(-1)! },
        body: JSON.stringify(body),
      });

    for (const [fault, answer] of [
      [
        'a provider 5xx',
        (() => [500, { error: { type: 'api_error', message: 'An unknown error occurred' } }]) as (body: Json) => [number, unknown],
      ],
      ['a timeout', 'timeout' as const],
    ] as const) {
      await t.test(`${fault} at PaymentIntent creation: nothing done, the same credential again charges once`, async (t) => {
        const before = await db.access.findUniqueOrThrow({ where: { id: accessId } });
        const pi = `pi_3TestRetry${fault === 'a timeout' ? 'T' : 'S'}`;
        chargeAnswers(answer, succeeded(pi));
        const res = await payByCard({ amountUsd: '1.00' }, `?accessId=${accessId}`);
        t.equal(res.status, 503);
        t.match(await res.json(), { error: 'service_unavailable', reason: /card provider did not answer/ });
        t.match(await db.access.findUniqueOrThrow({ where: { id: accessId } }), { stateVersion: before.stateVersion });
        t.equal(await db.cardPayment.count({ where: { id: pi } }), 0, 'no card payment recorded');

        const again = await sendAgain(`?accessId=${accessId}`, { amountUsd: '1.00' });
        t.equal(again.status, 201);
        t.match(await again.json(), { account: { stateVersion: before.stateVersion + 1 } });
        const [first, second] = charges.slice(-2);
        t.same(first!.body, second!.body, 'the same PaymentIntent asked for');
        t.equal(second!.key, `hub-card-${first!.body['metadata[hubPaymentId]']}`, 'under the same key: one PaymentIntent');
        if (first!.key) t.equal(first!.key, second!.key);
        const third = await sendAgain(`?accessId=${accessId}`, { amountUsd: '1.00' });
        t.equal(third.status, 409, 'a third sending reaches no provider');
        t.match(await third.json(), { error: 'payment_request_already_completed' });
        t.ok(stripe.isDone());
      });
    }

    await t.test('a declined card: 402 settlement_failed, no account change, the attempt released', async (t) => {
      const before = await db.access.findUniqueOrThrow({ where: { id: accessId } });
      chargeAnswers([402, DECLINED]);
      const res = await payByCard({ amountUsd: '1.00' }, `?accessId=${accessId}`);
      t.equal(res.status, 402);
      const body = (await res.json()) as Json;
      t.match(body, { error: 'payment_required', reason: 'settlement_failed', settlementReason: 'card_declined' });
      t.match(await db.access.findUniqueOrThrow({ where: { id: accessId } }), {
        stateVersion: before.stateVersion,
        balanceMicros: before.balanceMicros,
      });
      const attemptId = charges.at(-1)!.body['metadata[hubPaymentId]'];
      t.match(await db.paymentAttempt.findUniqueOrThrow({ where: { id: attemptId } }), {
        status: 'released',
        settlementReason: 'card_declined',
      });
      const again = await sendAgain(`?accessId=${accessId}`, { amountUsd: '1.00' });
      t.match(await again.json(), { settlementReason: 'card_declined' }, 'the same token is not charged again');
    });

    await t.test("a PaymentIntent still processing: 202 settling, then the provider's event opens the top-up once", async (t) => {
      const before = await db.access.findUniqueOrThrow({ where: { id: accessId } });
      const pi = 'pi_3TestProcessing04';
      let attemptId = '';
      chargeAnswers((body) => {
        attemptId = body['metadata[hubPaymentId]'];
        return [200, paymentIntentObject(pi, { amount: 100, status: 'processing', metadata: { hubPaymentId: attemptId } })];
      });
      const res = await payByCard({ amountUsd: '1.00' }, `?accessId=${accessId}`);
      t.equal(res.status, 202);
      t.match(await res.json(), { status: 'settling', payment: { id: attemptId, status: 'in_flight' } });
      t.match(await db.access.findUniqueOrThrow({ where: { id: accessId } }), { stateVersion: before.stateVersion });
      const succeededEvent = paymentIntentObject(pi, { amount: 100, metadata: { hubPaymentId: attemptId } });
      await hook('evt_pi_late', 'payment_intent.succeeded', succeededEvent);
      await hook('evt_pi_late_again', 'payment_intent.succeeded', succeededEvent);
      t.match(await db.access.findUniqueOrThrow({ where: { id: accessId } }), {
        stateVersion: before.stateVersion + 1,
        creditGrantedMicros: before.creditGrantedMicros! + 1_000_000n,
      });
      t.match(await db.cardPayment.findUniqueOrThrow({ where: { id: pi } }), {
        accessId,
        paymentAttemptId: attemptId,
        status: 'succeeded',
      });
      t.match(await db.paymentAttempt.findUniqueOrThrow({ where: { id: attemptId } }), { status: 'settled', accessId });
    });

    await t.test('a card credential altered, malformed, or sent for a call is refused before any provider call', async (t) => {
      const [, encoded] = sent.at(-1)!.split(' ');
      const credential = JSON.parse(Buffer.from(encoded!, 'base64url').toString('utf8'));
      const resend = (value: Json, path = `/extend?accessId=${accessId}`) =>
        plainFetch(url(path), {
          method: 'POST',
          // Beside the agent's token: a refused credential then answers why (alone, it is 401 bearer_required).
          headers: { ...bearer, 'payment-authorization': `Payment ${Buffer.from(JSON.stringify(value)).toString('base64url')}` },
          body: JSON.stringify({ amountUsd: '1.00' }),
        });
      const cheaper = {
        ...credential,
        challenge: { ...credential.challenge, request: Buffer.from('{"amount":"1","currency":"usd"}').toString('base64url') },
      };
      t.match(await (await resend(cheaper)).json(), { error: 'payment_required', settlementReason: 'unknown_challenge' }, 'another amount');
      const noToken = { ...credential, payload: { spt: 'not a token' } };
      t.match(await (await resend(noToken)).json(), { error: 'payment_required', settlementReason: 'invalid_payload' });
      const forCall = await resend(credential, '/search');
      t.equal(forCall.status, 409);
      t.match(await forCall.json(), { error: 'payment_request_mismatch', reason: /plan purchases and top-ups/ });
    });

    await t.test('a write that fails for good refunds the card payment through the provider, retried until accepted', async (t) => {
      await worker().runOnce(); // the first account's writes so far reach the seller
      t.match(
        await receiver.store.get(accessId),
        { stateVersion: 7, balanceMicros: 6_500_000n },
        'two retried top-ups and a late one of $1.00, once each',
      );
      const buyer = await registerAgent(hub, 'acme');
      const headers = { authorization: `Bearer ${buyer.token}`, 'content-type': 'application/json' };
      const pi = 'pi_3TestRefused0003';
      chargeAnswers(succeeded(pi));
      const res = await mppx.fetch(url('/extend'), {
        method: 'POST',
        headers,
        body: JSON.stringify({ planId: credits, amountUsd: '3.00' }),
      });
      t.equal(res.status, 201);
      const bought = ((await res.json()) as Json).account.accessId as string;
      const refunds: Seen[] = [];
      const refundAnswers = (...answers: [number, unknown][]) => {
        for (const answer of answers)
          stripe
            .post('/v1/refunds', (body) => {
              refunds.push({ body, key: '', account: undefined, version: undefined });
              return true;
            })
            .reply((request) => {
              refunds.at(-1)!.key = String(request.headers.get('idempotency-key'));
              refunds.at(-1)!.account = String(request.headers.get('stripe-account'));
              return answer;
            });
      };
      // The seller refuses the account (400): the write fails for good; the provider fails the first ask.
      receiver.mode = { kind: 'status', status: 400, body: '{"error":"no such customer"}' };
      refundAnswers([500, { error: { type: 'api_error', message: 'An unknown error occurred' } }]);
      await worker().runOnce();
      receiver.mode = { kind: 'sdk' };
      t.match(await db.accountWrite.findFirstOrThrow({ where: { accessId: bought } }), { status: 'failed' });
      t.match(await db.cardPayment.findUniqueOrThrow({ where: { id: pi } }), { status: 'refund_requested', refundId: null });
      t.match(
        await db.paymentAttempt.findFirstOrThrow({ where: { accessId: bought } }),
        { status: 'settled' },
        'not owed by the seller: the provider refunds it',
      );
      // The pending loop's pass asks again, under the same key.
      const accepted = refundObject(pi, 300);
      refundAnswers([200, accepted]);
      t.equal(await requestCardRefunds(db, hub.cp.config.cardPayments!, silent), 1);
      t.match(await db.cardPayment.findUniqueOrThrow({ where: { id: pi } }), { status: 'refund_requested', refundId: accepted.id });
      t.equal(refunds.length, 2);
      for (const ask of refunds) {
        t.match(ask, { body: { payment_intent: pi, 'metadata[hubAccessId]': bought }, key: `hub-refund-${pi}`, account: ACCOUNT });
      }
      t.equal(await requestCardRefunds(db, hub.cp.config.cardPayments!, silent), 0, 'accepted once: not asked again');
      t.ok(stripe.isDone());
    });
  });

  t.test(`${provider}: without the provider's keys no card is offered and crypto purchases work`, async (t) => {
    const world = await startPaidWorld(t, provider);
    const { hub, url, offerPlan, chain, payerKey } = world;
    const credits = await offerPlan({ name: 'Credits', slug: 'credits', billingMode: 'credit', minimumPurchaseUsd: '1.00' });
    const agent = await registerAgent(hub, 'acme');
    const bearer = { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' };
    const unpaid = await fetch(url('/extend'), {
      method: 'POST',
      headers: bearer,
      body: JSON.stringify({ planId: credits, amountUsd: '5.00' }),
    });
    t.equal(unpaid.status, 402);
    await unpaid.arrayBuffer();
    t.same(
      Challenge.deserializeList(unpaid.headers.get('www-authenticate')!).map((c) => c.method),
      ['evm'],
    );
    const { evm } = await import('mppx/client');
    const { privateKeyToAccount } = await import('viem/accounts');
    const mppx = Mppx.create({
      polyfill: false,
      methods: [evm({ account: privateKeyToAccount(payerKey), authorization: { name: chain.token.name, version: chain.token.version } })],
    });
    const bought = await mppx.fetch(url('/extend'), {
      method: 'POST',
      headers: bearer,
      body: JSON.stringify({ planId: credits, amountUsd: '5.00' }),
    });
    t.equal(bought.status, 201);
    t.match(await bought.json(), { account: { creditGrantedUsd: '5.000000' }, payment: { status: 'settled' } });
    const link = await callHub(hub.cp.url, 'POST', '/v1/stripe-connect/account-link', {
      token: hub.apiKey,
      body: { sellerId: world.sellerId, returnUrl: 'https://seller.example.com/done', refreshUrl: 'https://seller.example.com/again' },
    });
    t.match(link, { status: 503, body: { error: 'card_payments_not_configured' } });
  });
}
