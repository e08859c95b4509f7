/**
 * Prometheus metrics of the proxy, kept as plain counters (no per-request objects are retained):
 * requests in progress, requests by status class, a latency histogram, and upstream errors by kind.
 */
const LATENCY_BUCKETS_MS = [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];

export type UpstreamErrorKind = 'connect' | 'connect_timeout' | 'headers_timeout' | 'body_timeout' | 'reset' | 'other';

/** One process's counters as plain data: what a worker hands the process that serves the metrics port. */
export type MetricsSnapshot = {
  inProgress: number;
  requests: Record<string, number>;
  upstreamErrors: Record<string, number>;
  /** Cumulative counts per latency bucket, in `LATENCY_BUCKETS_MS` order. */
  buckets: number[];
  latencyCount: number;
  latencySumMs: number;
};

export class ProxyMetrics {
  private readonly requests = new Map<string, number>();
  private readonly upstreamErrors = new Map<UpstreamErrorKind, number>();
  private readonly buckets = new Array<number>(LATENCY_BUCKETS_MS.length).fill(0);
  private latencyCount = 0;
  private latencySumMs = 0;
  /** Requests received and not yet answered (or given up by their client). */
  inProgress = 0;

  started(): void {
    this.inProgress++;
  }

  /** A request started with `started` ended: answered with `status`, or closed. */
  observe(status: number, durationMs: number): void {
    this.inProgress--;
    const key = `${Math.floor(status / 100)}xx`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    this.latencyCount++;
    this.latencySumMs += durationMs;
    for (let i = 0; i < LATENCY_BUCKETS_MS.length; i++) if (durationMs <= LATENCY_BUCKETS_MS[i]!) this.buckets[i]!++;
  }

  upstreamError(kind: UpstreamErrorKind): void {
    this.upstreamErrors.set(kind, (this.upstreamErrors.get(kind) ?? 0) + 1);
  }

  snapshot(): MetricsSnapshot {
    return {
      inProgress: this.inProgress,
      requests: Object.fromEntries(this.requests),
      upstreamErrors: Object.fromEntries(this.upstreamErrors),
      buckets: [...this.buckets],
      latencyCount: this.latencyCount,
      latencySumMs: this.latencySumMs,
    };
  }

  render(): string {
    return renderMetrics([{ labels: {}, snapshot: this.snapshot() }]);
  }
}

/**
 * The exposition text of one or more processes' counters, each series carrying its process's
 * `labels` (a worker's `worker="2"`; none for a proxy that is one process).
 */
export function renderMetrics(parts: { labels: Record<string, string>; snapshot: MetricsSnapshot }[]): string {
  const lines: string[] = [];
  const family = (name: string, type: string, help: string, each: (series: Series, s: MetricsSnapshot) => void) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const { labels, snapshot } of parts) {
      each((suffix, value, extra = {}) => lines.push(`${name}${suffix}${labelText({ ...labels, ...extra })} ${value}`), snapshot);
    }
  };
  family('hub_proxy_requests_in_progress', 'gauge', 'Requests received and not yet answered.', (series, s) => series('', s.inProgress));
  family('hub_proxy_requests_total', 'counter', 'Requests answered by the proxy, by status class.', (series, s) => {
    for (const [status, n] of Object.entries(s.requests)) series('', n, { status });
  });
  family('hub_proxy_request_duration_seconds', 'histogram', 'Time from request to response end.', (series, s) => {
    for (const [i, ms] of LATENCY_BUCKETS_MS.entries()) series('_bucket', s.buckets[i] ?? 0, { le: String(ms / 1000) });
    series('_bucket', s.latencyCount, { le: '+Inf' });
    series('_sum', s.latencySumMs / 1000);
    series('_count', s.latencyCount);
  });
  family('hub_proxy_upstream_errors_total', 'counter', 'Failed upstream exchanges, by kind.', (series, s) => {
    for (const [kind, n] of Object.entries(s.upstreamErrors)) series('', n, { kind });
  });
  return `${lines.join('\n')}\n`;
}

type Series = (suffix: string, value: number, labels?: Record<string, string>) => void;

function labelText(labels: Record<string, string>): string {
  const pairs = Object.entries(labels).map(([name, value]) => `${name}="${value}"`);
  return pairs.length ? `{${pairs.join(',')}}` : '';
}
