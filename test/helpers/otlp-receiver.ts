import { createServer } from 'node:http';
import { closeServer, listen } from '../../runtime/http-server.js';

type Tap = { teardown: (fn: () => unknown) => void };

type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
export type ReceivedSpan = {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  attributes: Record<string, string | number | boolean | undefined>;
};

/**
 * An OTLP/HTTP collector on loopback, as small as a test needs: it takes `POST /v1/traces` in the
 * JSON encoding, answers 200, and keeps each body as sent and its spans flattened.
 */
export async function startOtlpReceiver(t: Tap) {
  const bodies: string[] = [];
  const spans: ReceivedSpan[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        bodies.push(body);
        spans.push(...spansOf(JSON.parse(body)));
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  const port = await listen(server, 0, '127.0.0.1');
  t.teardown(() => closeServer(server, 1_000));
  return { url: `http://127.0.0.1:${port}`, bodies, spans };
}

type ExportBody = {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: AnyValue }[] };
    scopeSpans?: {
      spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; attributes?: { key: string; value: AnyValue }[] }[];
    }[];
  }[];
};

function spansOf(body: ExportBody): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((resource) => {
    const service = String(valuesOf(resource.resource?.attributes)['service.name']);
    return (resource.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        service,
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId || undefined,
        name: span.name,
        attributes: valuesOf(span.attributes),
      })),
    );
  });
}

function valuesOf(attributes: { key: string; value: AnyValue }[] = []): ReceivedSpan['attributes'] {
  return Object.fromEntries(
    attributes.map(({ key, value }) => [
      key,
      value.stringValue ?? (value.intValue === undefined ? (value.boolValue ?? value.doubleValue) : Number(value.intValue)),
    ]),
  );
}
