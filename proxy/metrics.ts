import { AggregatorRegistry, Counter, Gauge, Histogram, type MetricObjectWithValues, type MetricValue, Registry } from 'prom-client';

/**
 * Prometheus metrics of the proxy, kept by prom-client in a registry of this process's own (not
 * prom-client's global one, so two proxies in one test process count apart): requests in progress,
 * requests by status class, a latency histogram, and upstream errors by kind.
 */
const LATENCY_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export type UpstreamErrorKind = 'connect' | 'connect_timeout' | 'headers_timeout' | 'body_timeout' | 'reset' | 'other';

/** One process's metrics as plain data (prom-client's JSON form): what a worker hands the primary. */
export type MetricsSnapshot = MetricObjectWithValues<MetricValue<string>>[];

export class ProxyMetrics {
  private readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'hub_proxy_requests_total',
    help: 'Requests answered by the proxy, by status class.',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'hub_proxy_request_duration_seconds',
    help: 'Time from request to response end.',
    buckets: LATENCY_BUCKETS_S,
    registers: [this.registry],
  });
  private readonly upstreamErrors = new Counter({
    name: 'hub_proxy_upstream_errors_total',
    help: 'Failed upstream exchanges, by kind.',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  /** Requests received and not yet answered (or given up by their client). */
  inProgress = 0;

  constructor() {
    // A plain field the hot path also reads (JWE admission); the gauge reads it at scrape time.
    const metrics = this;
    new Gauge({
      name: 'hub_proxy_requests_in_progress',
      help: 'Requests received and not yet answered.',
      registers: [this.registry],
      collect() {
        this.set(metrics.inProgress);
      },
    });
  }

  started(): void {
    this.inProgress++;
  }

  /** A request started with `started` ended: answered with `status`, or closed. */
  observe(status: number, durationMs: number): void {
    this.inProgress--;
    this.requests.inc({ status: `${Math.floor(status / 100)}xx` });
    this.latency.observe(durationMs / 1000);
  }

  upstreamError(kind: UpstreamErrorKind): void {
    this.upstreamErrors.inc({ kind });
  }

  snapshot(): Promise<MetricsSnapshot> {
    return this.registry.getMetricsAsJSON() as Promise<MetricsSnapshot>;
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}

/**
 * The exposition text of several workers' metrics, each series labelled with its worker's
 * `labels` (`worker="2"`). prom-client's cluster aggregation merges series whose labels are
 * equal; with the worker label on every series nothing is merged, each worker's stays its own
 * (docs/decisions.md#D-222, #D-251).
 */
export function renderMetrics(parts: { labels: Record<string, string>; snapshot: MetricsSnapshot }[]): Promise<string> {
  const labelled = parts.map(({ labels, snapshot }) =>
    snapshot.map((metric) => ({ ...metric, values: metric.values.map((value) => ({ ...value, labels: { ...labels, ...value.labels } })) })),
  );
  return AggregatorRegistry.aggregate(labelled).metrics();
}
