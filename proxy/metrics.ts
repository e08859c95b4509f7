/**
 * Prometheus metrics of the proxy, kept as plain counters (no per-request objects are retained):
 * requests in progress, requests by status class, a latency histogram, and upstream errors by kind.
 */
const LATENCY_BUCKETS_MS = [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];

export type UpstreamErrorKind = 'connect' | 'connect_timeout' | 'headers_timeout' | 'body_timeout' | 'reset' | 'other';

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

  render(): string {
    const lines = [
      '# HELP hub_proxy_requests_in_progress Requests received and not yet answered.',
      '# TYPE hub_proxy_requests_in_progress gauge',
      `hub_proxy_requests_in_progress ${this.inProgress}`,
      '# HELP hub_proxy_requests_total Requests answered by the proxy, by status class.',
      '# TYPE hub_proxy_requests_total counter',
    ];
    for (const [cls, n] of this.requests) lines.push(`hub_proxy_requests_total{status="${cls}"} ${n}`);
    lines.push(
      '# HELP hub_proxy_request_duration_seconds Time from request to response end.',
      '# TYPE hub_proxy_request_duration_seconds histogram',
    );
    LATENCY_BUCKETS_MS.forEach((ms, i) => {
      lines.push(`hub_proxy_request_duration_seconds_bucket{le="${ms / 1000}"} ${this.buckets[i]}`);
    });
    lines.push(`hub_proxy_request_duration_seconds_bucket{le="+Inf"} ${this.latencyCount}`);
    lines.push(`hub_proxy_request_duration_seconds_sum ${this.latencySumMs / 1000}`);
    lines.push(`hub_proxy_request_duration_seconds_count ${this.latencyCount}`);
    lines.push(
      '# HELP hub_proxy_upstream_errors_total Failed upstream exchanges, by kind.',
      '# TYPE hub_proxy_upstream_errors_total counter',
    );
    for (const [kind, n] of this.upstreamErrors) lines.push(`hub_proxy_upstream_errors_total{kind="${kind}"} ${n}`);
    return `${lines.join('\n')}\n`;
  }
}
