import { z } from 'zod';
import { assertSlug, assertUsageItems, assertUsageQuantity, USAGE_DENIALS, type UsageDenial } from '../shared/usage.js';
import { AllowanceUnavailableError, UsageApiError } from './usage-errors.js';
import { type ReportAttempt, type ReportQueueOptions, ReportRetryQueue } from './usage-report-queue.js';

export { AllowanceUnavailableError, UsageApiError };

/**
 * A typed client for hub's usage API (spec: Endpoints › Usage check, Usage report), authenticated
 * with an API key: `usage:read` for checks, `usage:write` for reports.
 */

/** The seven denial reasons of a usage check (spec: Errors › Usage endpoints). */
export const USAGE_DENIAL_REASONS = USAGE_DENIALS;
export type UsageDenialReason = UsageDenial;

export type UsageCheckItem = { meterSlug: string; quantity?: number; maxQuantity?: number };
export type UsageCheckRequest = { zcRequestId: string; serviceSlug: string; usage: UsageCheckItem[] };
/** `reason` is one of the seven codes; typed open so a newer hub's code still reads. */

export type UsageCheckResult = {
  allowed: boolean;
  reason: UsageDenialReason | (string & {}) | null;
  /** Set when hub could not be asked and the `failOpen` policy let the call through unchecked. */
  outage?: true;
};

export type UsageReportRequest = {
  idempotencyKey: string;
  zcRequestId: string;
  serviceSlug: string;
  usage: { meterSlug: string; quantity: number }[];
};
/**
 * A recorded report (`duplicate: true` when the idempotency key was seen before), the refusal, or,
 * under `failOpen` while hub is unreachable, `queued`: kept and sent again until hub answers.
 */
export type UsageReportResult =
  | ({ ok: true; id: string; duplicate: boolean; queued?: undefined } & Record<string, unknown>)
  | { ok: true; queued: true; id?: undefined; duplicate?: undefined }
  | { ok: false; status: 402 | 404 | 409; error: string; reason?: string };

/**
 * What to do when hub's usage API is unavailable (no answer within `timeoutMs`, a network error,
 * a 5xx or 429, or an answer that is not the contract's):
 *
 * - `failClosed` (the default): `check()` and `report()` throw `AllowanceUnavailableError`, and the
 *   agent is answered `503 { error: "allowance_unavailable" }`: nothing is served that hub has
 *   not allowed.
 * - `failOpen`: `check()` answers `{ allowed: true, reason: null, outage: true }`, so the call is
 *   served; `report()` keeps the report and sends it again until hub answers (`{ ok: true, queued: true }`).
 *
 * Either way each outage is told to `onOutage` and counted in `outages()`. A refusal of the
 * credentials (401, 403) or a route hub does not have (404: a wrong `baseUrl`) is no outage: it
 * throws `UsageApiError` under both policies, since letting every call through would hide it.
 */
export type AllowanceOutagePolicy = 'failClosed' | 'failOpen';

/** One outage the client met; see `AllowanceOutagePolicy`. */
export type AllowanceOutageEvent =
  | { type: 'check_refused' | 'check_let_through'; request: UsageCheckRequest; error: AllowanceUnavailableError }
  | { type: 'report_refused' | 'report_queued'; request: UsageReportRequest; error: AllowanceUnavailableError }
  /** A queued report hub has now answered: recorded, a duplicate, or refused (402/404/409). */
  | { type: 'report_delivered'; request: UsageReportRequest; result: UsageReportResult }
  /** A report the queue could not keep (full, closed) or hub will never take (credentials refused). */
  | { type: 'report_dropped'; request: UsageReportRequest; error: UsageApiError };

/** How many of each `AllowanceOutageEvent` since the start, and `reportsWaiting` in the queue now. */
export type AllowanceOutageCounts = Record<
  'checksRefused' | 'checksLetThrough' | 'reportsRefused' | 'reportsQueued' | 'reportsDelivered' | 'reportsDropped' | 'reportsWaiting',
  number
>;

export type UsageClientOptions = {
  /** hub's control-plane base URL, such as `https://hub.example.com` (a path prefix is kept). */
  baseUrl: string;
  /** An API key (`hub_…`) with `usage:read` and, to report, `usage:write`. */
  apiKey: string;
  /** Defaults to the global fetch (undici's, looked up per call); tests and proxies pass their own. */
  fetch?: typeof fetch;
  /** Per call; the default 5 s keeps a seller's own response budget in reach. */
  timeoutMs?: number;
  /** When hub's usage API is unavailable; default `failClosed`. See `AllowanceOutagePolicy`. */
  allowanceOutage?: AllowanceOutagePolicy;
  /** Told of each outage (for the seller's logs and metrics); a hook that throws is ignored. */
  onOutage?: (event: AllowanceOutageEvent) => void;
  /** `failOpen`: reports kept at most while hub is down (default 10,000); past it, `report()` throws. */
  maxQueuedReports?: number;
  /** `failOpen`: the wait before queued reports are sent again, doubling after each failed try (default 1 s, at most 60 s). */
  retryDelayMs?: number;
  retryMaxDelayMs?: number;
};

export type UsageClient = {
  check(request: UsageCheckRequest): Promise<UsageCheckResult>;
  report(request: UsageReportRequest): Promise<UsageReportResult>;
  /** Sends queued reports now; resolves when they are through or hub is still down. Never rejects. */
  flush(): Promise<void>;
  /** For shutdown: stops retrying after one last try of at most `timeoutMs` (default 5 s); reports left are dropped. */
  close(options?: { timeoutMs?: number }): Promise<void>;
  outages(): AllowanceOutageCounts;
};

const checkResponse = z.object({ allowed: z.boolean(), reason: z.string().nullable() });
const reportResponse = z.looseObject({ id: z.string(), duplicate: z.boolean() });
const refusal = z.object({ error: z.string(), reason: z.string().optional() });
const REFUSAL_STATUSES = new Set([402, 404, 409]);

/**
 * Whether an answer that is not the contract's means hub's usage API is down, rather than set up
 * wrong: nothing arrived (0), a timeout or rate limit on the way (408, 429), a server error, or a
 * 2xx that is not the answer the contract promises (a proxy's page, a cut body).
 */
function isOutage(status: number): boolean {
  return status === 0 || status === 408 || status === 429 || status >= 500 || (status >= 200 && status < 300);
}

type Answer = { status: number; json: unknown; text: string };

export function createUsageClient(options: UsageClientOptions): UsageClient {
  const base = options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`;
  // The global fetch is looked up per call, so instrumentation installed after this (tracing, a
  // test's fault injection) sees these requests too.
  const doFetch: typeof fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const timeoutMs = options.timeoutMs ?? 5_000;
  const policy = options.allowanceOutage ?? 'failClosed';
  if (policy !== 'failClosed' && policy !== 'failOpen') throw new TypeError('allowanceOutage must be "failClosed" or "failOpen"');
  const counts: AllowanceOutageCounts = {
    checksRefused: 0,
    checksLetThrough: 0,
    reportsRefused: 0,
    reportsQueued: 0,
    reportsDelivered: 0,
    reportsDropped: 0,
    reportsWaiting: 0,
  };

  function tell(event: AllowanceOutageEvent): void {
    try {
      options.onOutage?.(event);
    } catch {
      // The seller's hook is theirs to get right; it must not turn an outage into a failed call.
    }
  }

  /** POSTs a body; throws `UsageApiError` with status 0 when no answer arrives. */
  async function post(path: string, body: unknown): Promise<Answer> {
    const url = new URL(path, base);
    try {
      const response = await doFetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'error',
      });
      const text = await response.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: response.status, json, text };
    } catch (err) {
      throw new UsageApiError(`POST ${url.pathname} failed: ${(err as Error).message}`, 0, undefined, { cause: err });
    }
  }

  /** An answer off the contract, as the error it is. */
  function offContract(what: string, answer: Answer): UsageApiError {
    const message =
      answer.json === undefined ? `${what} answered ${answer.status} without JSON` : `${what} answered ${answer.status} off the contract`;
    return new UsageApiError(message, answer.status, answer.json ?? answer.text);
  }

  function unavailable(cause: UsageApiError): AllowanceUnavailableError {
    return new AllowanceUnavailableError(`hub's usage API is unavailable: ${cause.message}`, cause.status, cause.body, { cause });
  }

  /** One attempt at a report: hub's answer, an outage, or a refusal sending again cannot mend. */
  async function sendReport(request: UsageReportRequest): Promise<ReportAttempt<UsageReportResult>> {
    let answer: Answer;
    try {
      answer = await post('v1/usage', {
        idempotencyKey: request.idempotencyKey,
        zcRequestId: request.zcRequestId,
        serviceSlug: request.serviceSlug,
        usage: request.usage.map(({ meterSlug, quantity }) => ({ meterSlug, quantity })),
      });
    } catch (err) {
      return { outage: err as UsageApiError };
    }
    if (answer.status === 200 || answer.status === 201) {
      const parsed = reportResponse.safeParse(answer.json);
      if (parsed.success) return { answered: { ...parsed.data, ok: true } };
    } else if (REFUSAL_STATUSES.has(answer.status)) {
      const parsed = refusal.safeParse(answer.json);
      if (parsed.success) return { answered: { ok: false, status: answer.status as 402 | 404 | 409, ...parsed.data } };
    }
    const error = offContract('usage report', answer);
    return isOutage(answer.status) ? { outage: error } : { refused: error };
  }

  const queue = new ReportRetryQueue<UsageReportRequest, UsageReportResult>(sendReport, retrySettings(options), {
    delivered(request, result) {
      counts.reportsDelivered++;
      tell({ type: 'report_delivered', request, result });
    },
    dropped(request, error) {
      counts.reportsDropped++;
      tell({
        type: 'report_dropped',
        request,
        error: error ?? new UsageApiError('the usage client closed before hub took the report', 0, undefined),
      });
    },
  });

  return {
    async check(request) {
      validateItems(request.usage, true);
      let answer: Answer;
      try {
        answer = await post('v1/usage/check', {
          zcRequestId: request.zcRequestId,
          serviceSlug: request.serviceSlug,
          usage: request.usage.map(({ meterSlug, quantity, maxQuantity }) => ({ meterSlug, quantity, maxQuantity })),
        });
      } catch (err) {
        return checkOutage(request, err as UsageApiError);
      }
      const parsed = checkResponse.safeParse(answer.json);
      // The check always answers 200 (spec: Usage check).
      if (answer.status === 200 && parsed.success) {
        queue.hubAnswered();
        return parsed.data;
      }
      const error = offContract('usage check', answer);
      if (isOutage(answer.status)) return checkOutage(request, error);
      throw error;
    },

    async report(request) {
      validateItems(request.usage, false);
      const attempt = await sendReport(request);
      if ('answered' in attempt) {
        queue.hubAnswered();
        return attempt.answered;
      }
      if ('refused' in attempt) throw attempt.refused;
      const error = unavailable(attempt.outage);
      if (policy === 'failOpen' && queue.add(request)) {
        counts.reportsQueued++;
        tell({ type: 'report_queued', request, error });
        return { ok: true, queued: true };
      }
      if (policy === 'failOpen') {
        counts.reportsDropped++;
        tell({ type: 'report_dropped', request, error });
      } else {
        counts.reportsRefused++;
        tell({ type: 'report_refused', request, error });
      }
      throw error;
    },

    flush: () => queue.flush(),
    async close(closeOptions = {}) {
      await queue.close(closeOptions.timeoutMs ?? 5_000);
    },
    outages: () => ({ ...counts, reportsWaiting: queue.size }),
  };

  function checkOutage(request: UsageCheckRequest, cause: UsageApiError): UsageCheckResult {
    const error = unavailable(cause);
    if (policy === 'failOpen') {
      counts.checksLetThrough++;
      tell({ type: 'check_let_through', request, error });
      return { allowed: true, reason: null, outage: true };
    }
    counts.checksRefused++;
    tell({ type: 'check_refused', request, error });
    throw error;
  }
}

/** The report queue's settings; a wait under 1 ms would retry in a tight loop while hub is down. */
function retrySettings(options: UsageClientOptions): ReportQueueOptions {
  const max = options.maxQueuedReports ?? 10_000;
  const delayMs = options.retryDelayMs ?? 1_000;
  const maxDelayMs = options.retryMaxDelayMs ?? Math.max(60_000, delayMs);
  if (!Number.isSafeInteger(max) || max < 0) throw new RangeError('maxQueuedReports must be a whole number from 0');
  if (!Number.isFinite(delayMs) || delayMs < 1) throw new RangeError('retryDelayMs must be at least 1');
  if (!Number.isFinite(maxDelayMs) || maxDelayMs < delayMs) throw new RangeError('retryMaxDelayMs must be at least retryDelayMs');
  return { max, delayMs, maxDelayMs };
}

function validateItems(usage: readonly UsageCheckItem[], check: boolean): void {
  if (!Array.isArray(usage)) throw new TypeError('usage must be an array');
  assertUsageItems(usage, 'usage');
  usage.forEach((item, i) => {
    assertSlug(item.meterSlug, `usage[${i}].meterSlug`);
    if (item.quantity !== undefined) assertUsageQuantity(item.quantity, `usage[${i}].quantity`);
    else if (!check) throw new TypeError(`usage[${i}].quantity is required in a report`);
    if (check && item.maxQuantity !== undefined) assertUsageQuantity(item.maxQuantity, `usage[${i}].maxQuantity`);
  });
}
