import t from 'tap';
import { startTestChain } from '../helpers/chain.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { startProcessWorld } from '../helpers/process-world.js';
import { eventually } from '../helpers/processes.js';
import { x402Fetch } from '../helpers/x402-agent.js';

// One paid call is one trace across hub's two processes (docs/decisions.md#D-253), here as
// `hub start` runs them: the proxy and the control-plane as processes of their own, each exporting
// its spans over OTLP/HTTP, tied only by the `traceparent` the proxy sends with its internal calls.
// What each span carries is checked in test/proxy/payments/paid-call-trace.test.ts.

t.test('a paid call through `hub start`’s separate processes is one trace', async (t) => {
  const receiver = await startOtlpReceiver(t);
  const chain = await startTestChain(t);
  // Spans leave in batches; a short delay keeps the test from waiting the default 5 s.
  const world = await startProcessWorld(t, 'sqlite', chain, { HUB_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50' });

  const res = await x402Fetch(world.payerKey)(world.payUrl('/search?q=traced'));
  t.equal(res.status, 200);
  await res.text();

  const exported = () => ['payment.settle', 'internal.settlePaidRequest'].every((name) => receiver.spans.some((s) => s.name === name));
  t.ok(await eventually(exported, 30_000), 'both processes exported their spans');
  const claim = receiver.spans.find((s) => s.name === 'payment.claim')!;
  const trace = receiver.spans.filter((s) => s.traceId === claim.traceId);
  t.same(new Set(trace.map((s) => s.service)), new Set(['hub-proxy', 'hub-control-plane']), 'one trace id in both processes');
  const named = (name: string) => trace.find((s) => s.name === name);
  const root = named('paid call');
  t.equal(root?.parentSpanId, undefined, 'the paid call starts the trace');
  for (const name of ['payment.claim', 'upstream', 'payment.settle'])
    t.equal(named(name)?.parentSpanId, root?.spanId, `${name} in the call`);
  t.equal(named('internal.claimPaidRequest')?.parentSpanId, claim.spanId, 'the control-plane serves the claim under the proxy’s span');
  t.equal(named('internal.settlePaidRequest')?.parentSpanId, named('payment.settle')?.spanId, 'and the settlement');
  t.match(named('internal.settlePaidRequest')?.attributes, {
    'hub.payment.id': claim.attributes['hub.payment.id'],
    'hub.payment.status': 'settled',
  });
  // The 402 before it: its own trace, priced by the control-plane under the proxy's challenge span.
  const challenge = receiver.spans.find(
    (s) => s.name === 'payment.challenge' && s.attributes['hub.payment.id'] === claim.attributes['hub.payment.id'],
  );
  t.ok(
    receiver.spans.some(
      (s) => s.name === 'internal.issuePaymentChallenge' && s.service === 'hub-control-plane' && s.parentSpanId === challenge?.spanId,
    ),
    'the challenge is priced under it, in the other process',
  );
});
