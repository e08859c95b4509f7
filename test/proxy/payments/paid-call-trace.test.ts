import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import t from 'tap';
import { privateKeyToAccount } from 'viem/accounts';
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
