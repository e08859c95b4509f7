import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import t from 'tap';
import { privateKeyToAccount } from 'viem/accounts';
import { startPendingSettlementLoop } from '../../../control-plane/storefront/pending-loop.js';
import { registerAgent } from '../../helpers/agents.js';
import { startOtlpReceiver } from '../../helpers/otlp-receiver.js';
import { startPaidWorld } from '../../helpers/paid-world.js';

// Spans leave in batches; a short delay keeps the test from waiting the default 5 s.
process.env.OTEL_BSP_SCHEDULE_DELAY = '50';

t.test('one paid call is one trace across the proxy and the control-plane, exported over OTLP/HTTP', async (t) => {
  const receiver = await startOtlpReceiver(t);
  const { payerKey, sellerId, url } = await startPaidWorld(t, 'sqlite', { env: { HUB_OTLP_ENDPOINT: receiver.url } });
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(payerKey) });
  client.setSpendControls({ allowedAssets: true });
  const signatures: string[] = [];
  const recordingFetch: typeof fetch = (input, init) => {
    const header = new Headers(input instanceof Request ? input.headers : init?.headers).get('payment-signature');
    if (header) signatures.push(header);
    return fetch(input, init);
  };
  const res = await wrapFetchWithPayment(recordingFetch, client)(url('/search?q=1'));
  t.equal(res.status, 200);
  await res.text();
  t.equal(signatures.length, 1, 'the paid retry carried one payment');

  const done = () => ['payment.settle', 'internal.settlePaidRequest'].every((name) => receiver.spans.some((s) => s.name === name));
  for (let i = 0; i < 100 && !done(); i++) await new Promise((r) => setTimeout(r, 50));
  t.ok(done(), 'both processes exported their spans');

  const claim = receiver.spans.find((s) => s.name === 'payment.claim')!;
  const trace = receiver.spans.filter((s) => s.traceId === claim.traceId);
  t.same(new Set(trace.map((s) => s.service)), new Set(['hub-proxy', 'hub-control-plane']), 'one trace id in both processes');
  t.same(
    new Set(trace.map((s) => s.name)),
    new Set(['paid call', 'payment.claim', 'upstream', 'payment.settle', 'internal.claimPaidRequest', 'internal.settlePaidRequest']),
  );
  const named = (name: string) => trace.find((s) => s.name === name)!;
  const root = named('paid call');
  t.equal(root.parentSpanId, undefined, 'the paid call starts the trace');
  for (const name of ['payment.claim', 'upstream', 'payment.settle']) t.equal(named(name).parentSpanId, root.spanId, `${name} in the call`);
  t.equal(named('internal.claimPaidRequest').parentSpanId, claim.spanId, 'the claim is served under the proxy’s traceparent');
  t.equal(named('internal.settlePaidRequest').parentSpanId, named('payment.settle').spanId);

  const paymentId = claim.attributes['hub.payment.id'];
  t.match(paymentId, /^apay_/);
  t.match(named('internal.claimPaidRequest').attributes, {
    'hub.payment.id': paymentId,
    'hub.seller.id': sellerId,
    'hub.payment.network': /^eip155:\d+$/,
    'hub.payment.amount_usd': '0.010000',
    'hub.payment.scheme': 'exact',
    'hub.payment.protocol': 'x402',
    'hub.payment.status': 'claimed',
  });
  t.match(named('payment.settle').attributes, {
    'hub.payment.id': paymentId,
    'hub.payment.status': 'settled',
    'hub.payment.charged_usd': '0.010000',
    'http.response.status_code': 200,
  });
  t.match(named('upstream').attributes, { 'http.response.status_code': 200 });
  t.match(root.attributes, { 'hub.seller.id': sellerId, 'http.request.method': 'GET', 'http.response.status_code': 200 });

  // The 402 before it is its own trace: the challenge, priced by the control-plane.
  const challenge = receiver.spans.find((s) => s.name === 'payment.challenge')!;
  t.not(challenge.traceId, claim.traceId);
  t.match(challenge.attributes, {
    'hub.payment.id': paymentId,
    'hub.payment.amount_usd': '0.010000',
    'hub.payment.scheme': 'exact',
    'hub.payment.status': 'challenged',
  });
  t.ok(
    receiver.spans.some((s) => s.name === 'internal.issuePaymentChallenge' && s.parentSpanId === challenge.spanId),
    'the challenge is served under it',
  );

  const { payload } = JSON.parse(Buffer.from(signatures[0]!, 'base64').toString('utf8'));
  const exported = receiver.bodies.join('\n');
  t.notOk(exported.includes(payload.signature.slice(2)), 'no span carries the payment’s signature');
  t.notOk(exported.includes(payload.authorization.nonce.slice(2)), 'nor its authorization');
  t.notOk(exported.includes(signatures[0]!.slice(0, 40)), 'nor the header');
});

t.test('a purchase, a seller’s usage report and a pending pass are traced too', async (t) => {
  const receiver = await startOtlpReceiver(t);
  const { hub, offerPlan, payerKey, url, served, db, rail, releaseHold } = await startPaidWorld(t, 'sqlite', {
    env: { HUB_OTLP_ENDPOINT: receiver.url },
  });
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(payerKey) });
  client.setSpendControls({ allowedAssets: true });
  const pay = wrapFetchWithPayment(fetch, client);
  /** The spans named `name` once `count` of them were exported (or 5 s passed). */
  const traced = async (name: string, count = 1) => {
    const named = () => receiver.spans.filter((s) => s.name === name);
    for (let i = 0; i < 100 && named().length < count; i++) await new Promise((r) => setTimeout(r, 50));
    return named();
  };

  await t.test('a purchase at the pay URL: the storefront’s span, the control-plane’s work under it', async (t) => {
    const planId = await offerPlan({ name: 'Monthly', slug: 'monthly', billingMode: 'subscription', basePriceUsd: '1.00' });
    const agent = await registerAgent(hub, 'acme');
    const headers = { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' };
    const bought = await pay(url('/extend'), { method: 'POST', headers, body: JSON.stringify({ planId }) });
    t.equal(bought.status, 201);
    await bought.text();
    const completed = (await traced('internal.completePurchase'))[0];
    t.ok(completed, 'the control-plane traced the paid purchase');
    const storefront = await traced('storefront /extend', 2);
    t.equal(storefront.length, 2, 'the challenge and the paid retry, each a trace of its own');
    const paid = storefront.find((s) => s.spanId === completed?.parentSpanId);
    t.ok(paid, 'the purchase is completed under the paid retry’s span, in the other process');
    t.equal(paid?.parentSpanId, undefined, 'which starts its trace');
    t.match(paid?.attributes, {
      'hub.seller.id': /^sel_/,
      'http.route': '/extend',
      'http.response.status_code': 201,
      'hub.payment.id': /^apay_/,
      'hub.payment.protocol': 'x402',
    });
    const started = receiver.spans.find((s) => s.name === 'internal.startPurchase');
    t.ok(
      started && storefront.some((s) => s.spanId === started.parentSpanId && s.spanId !== paid?.spanId),
      'the challenge priced under the first',
    );
  });

  await t.test('a usage report follows the seller’s own trace', async (t) => {
    // Reported while the seller holds the paid call, as a seller reports before it answers.
    const before = served.length;
    const call = pay(url('/hold?q=report'));
    for (let i = 0; i < 200 && served.length === before; i++) await new Promise((r) => setTimeout(r, 25));
    const sellersTrace = '0af7651916cd43dd8448eb211c80319c';
    const sellersSpan = 'b7ad6b7169203331';
    const reported = await fetch(`${hub.cp.url}/v1/usage`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${hub.apiKey}`,
        'content-type': 'application/json',
        traceparent: `00-${sellersTrace}-${sellersSpan}-01`,
      },
      body: JSON.stringify({
        idempotencyKey: 'traced-1',
        zcRequestId: served.at(-1),
        serviceSlug: 'search',
        usage: [{ meterSlug: 'calls', quantity: 0 }],
      }),
    });
    t.equal(reported.status, 200, await reported.text());
    releaseHold();
    t.equal((await call).status, 200, 'the paid call is answered');
    const [span] = await traced('POST /v1/usage');
    t.match(span, {
      service: 'hub-control-plane',
      traceId: sellersTrace,
      parentSpanId: sellersSpan,
      attributes: { 'http.route': '/v1/usage', 'http.request.method': 'POST', 'http.response.status_code': 200 },
    });
  });

  await t.test('each pass of the pending loop is a trace of its own, with what it finished', async (t) => {
    const stop = startPendingSettlementLoop(db, { live: rail }, hub.cp.logger, { intervalMs: 20 }, undefined, hub.cp.tracing);
    const [pass] = await traced('pending payments');
    stop();
    t.match(pass, {
      parentSpanId: undefined,
      attributes: { 'hub.pending.settled': 0, 'hub.pending.opened': 0, 'hub.pending.released': 0 },
    });
  });
});
