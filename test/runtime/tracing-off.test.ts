import { trace } from '@opentelemetry/api';
import t from 'tap';
import { activeSpan } from '../../runtime/tracing.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { startPaidWorld } from '../helpers/paid-world.js';

t.test('without HUB_OTLP_ENDPOINT nothing is traced, registered or exported', async (t) => {
  const receiver = await startOtlpReceiver(t);
  // OpenTelemetry's own variable is not hub's setting: it turns nothing on.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
  t.teardown(() => delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const { hub, url } = await startPaidWorld(t, 'sqlite');
  t.equal(hub.proxy.services.tracing, undefined, 'the proxy has no tracing');

  const challenged = await fetch(url('/search?q=off'));
  t.equal(challenged.status, 402);
  await challenged.text();
  await new Promise((r) => setTimeout(r, 300));

  t.same(receiver.bodies, [], 'nothing was exported');
  t.equal(activeSpan(), undefined);
  const probe = trace.getTracer('probe').startSpan('probe');
  t.equal(probe.isRecording(), false, 'no tracer provider is registered: the API answers with its no-op');
  t.equal(probe.spanContext().traceId, '0'.repeat(32));
});
