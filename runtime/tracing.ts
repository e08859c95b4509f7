import {
  type Attributes,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';

/**
 * The spans hub's code makes, and nothing when tracing is off (`HUB_OTLP_ENDPOINT` unset): a
 * caller holds a `Tracing` or `undefined`, and with `undefined` each helper is one branch and a
 * direct call, with no span, context or attribute object made (docs/decisions.md#D-252). What a
 * span may carry is in #D-253: ids, amounts, statuses; never a payment's payload or signature.
 */
export type Tracing = {
  tracer: Tracer;
  /** Sends what is still buffered and stops exporting. */
  stop(): Promise<void>;
};

/** Set once a process starts tracing (trace-export.ts): until then no span is ever active. */
let tracingStarted = false;

export function markTracingStarted(): void {
  tracingStarted = true;
}

/** `root`: a trace of its own, for work no request started (a loop's pass). */
export type SpanOptions = { kind?: SpanKind; attributes?: Attributes; root?: boolean };

/** Runs `work` in a span `name`, a child of the active one; off, runs `work(undefined)`. */
export function inSpan<T>(
  tracing: Tracing | undefined,
  name: string,
  work: (span: Span | undefined) => Promise<T>,
  options?: SpanOptions,
): Promise<T> {
  if (!tracing) return work(undefined);
  return tracing.tracer.startActiveSpan(name, options ?? {}, (span) => runIn(span, work));
}

/**
 * A span `name` for a request that came with `headers`: a child of the caller's span when they
 * carry W3C `traceparent`, else a new trace.
 */
export function inServerSpan<T>(
  tracing: Tracing | undefined,
  name: string,
  headers: Record<string, string | string[] | undefined>,
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!tracing) return work(undefined);
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  return tracing.tracer.startActiveSpan(name, { kind: SpanKind.SERVER }, parent, (span) => runIn(span, work));
}

/** `headers` with the active span's `traceparent` added, for a call to another process. */
export function withTraceContext<H extends Record<string, string>>(tracing: Tracing | undefined, headers: H): H {
  if (tracing) propagation.inject(context.active(), headers);
  return headers;
}

/**
 * The span the running code is in, when tracing is on: for code that learns an attribute deep
 * down and is handed no `Tracing` (a procedure's body).
 */
export function activeSpan(): Span | undefined {
  return tracingStarted ? trace.getActiveSpan() : undefined;
}

/** Marks `span` failed with the error's code or class, not its message: messages may quote what a caller sent. */
export function failSpan(span: Span, err: unknown): void {
  const code = (err as { code?: unknown } | undefined)?.code;
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute('error.type', typeof code === 'string' ? code : ((err as Error | undefined)?.name ?? 'Error'));
}

async function runIn<T>(span: Span, work: (span: Span) => Promise<T>): Promise<T> {
  try {
    return await work(span);
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

export { SpanKind };
