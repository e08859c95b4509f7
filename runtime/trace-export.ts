import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { markTracingStarted, type Tracing } from './tracing.js';

/**
 * Tracing for one process (`service` names it: `hub-proxy`, `hub-control-plane`), exported over
 * OTLP/HTTP as JSON to `<endpoint>/v1/traces`, in batches off the request path; undefined when no
 * endpoint is set, and then nothing is registered or started (docs/decisions.md#D-252).
 *
 * The first tracing of a process registers itself with the OpenTelemetry API (so libraries that
 * trace find it), the W3C propagator and an AsyncLocalStorage context manager; a second one in
 * the same process (tests run a proxy and a control-plane in one) uses its own provider and
 * shares those.
 */
export function startTracing(service: string, endpoint: string | undefined): Tracing | undefined {
  if (!endpoint) return undefined;
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/v1/traces` }))],
  });
  markTracingStarted();
  if (trace.setGlobalTracerProvider(provider)) {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  }
  return { tracer: provider.getTracer('hub'), stop: () => provider.shutdown() };
}
