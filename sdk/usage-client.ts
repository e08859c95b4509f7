import { z } from 'zod';
import { assertSlug, assertUsageItems, assertUsageQuantity, USAGE_DENIALS, type UsageDenial } from '../shared/usage.js';

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
export type UsageCheckResult = { allowed: boolean; reason: UsageDenialReason | (string & {}) | null };

export type UsageReportRequest = {
  idempotencyKey: string;
  zcRequestId: string;
  serviceSlug: string;
  usage: { meterSlug: string; quantity: number }[];
};
/** A recorded report (`duplicate: true` when the idempotency key was seen before), or the refusal. */
export type UsageReportResult =
  | ({ ok: true; id: string; duplicate: boolean } & Record<string, unknown>)
  | { ok: false; status: 402 | 404 | 409; error: string; reason?: string };

export type UsageClientOptions = {
  /** hub's control-plane base URL, such as `https://hub.example.com` (a path prefix is kept). */
  baseUrl: string;
  /** An API key (`hub_…`) with `usage:read` and, to report, `usage:write`. */
  apiKey: string;
  /** Defaults to the global fetch (undici's); tests and proxies pass their own. */
  fetch?: typeof fetch;
  /** Per call; the default 5 s keeps a seller's own response budget in reach. */
  timeoutMs?: number;
};

/** hub answered something the contract does not allow (bad key, missing scope, 5xx), or nothing at all. */
export class UsageApiError extends Error {
  override name = 'UsageApiError';
  /** The HTTP status, or 0 when no response arrived. */
  readonly status: number;
  readonly body: unknown;
  constructor(message: string, status: number, body: unknown, options?: { cause?: unknown }) {
    super(message, options);
    this.status = status;
    this.body = body;
  }
}

const checkResponse = z.object({ allowed: z.boolean(), reason: z.string().nullable() });
const reportResponse = z.looseObject({ id: z.string(), duplicate: z.boolean() });
const refusal = z.object({ error: z.string(), reason: z.string().optional() });
const REFUSAL_STATUSES = new Set([402, 404, 409]);

export type UsageClient = {
  check(request: UsageCheckRequest): Promise<UsageCheckResult>;
  report(request: UsageReportRequest): Promise<UsageReportResult>;
};

export function createUsageClient(options: UsageClientOptions): UsageClient {
  const base = options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`;
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 5_000;

  async function post(path: string, body: unknown): Promise<{ status: number; json: unknown }> {
    const url = new URL(path, base);
    let response: Response;
    try {
      response = await doFetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'error',
      });
    } catch (err) {
      throw new UsageApiError(`POST ${url.pathname} failed: ${(err as Error).message}`, 0, undefined, { cause: err });
    }
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new UsageApiError(`POST ${url.pathname} answered ${response.status} without JSON`, response.status, text);
    }
    return { status: response.status, json };
  }

  return {
    async check(request) {
      validateItems(request.usage, true);
      const { status, json } = await post('v1/usage/check', {
        zcRequestId: request.zcRequestId,
        serviceSlug: request.serviceSlug,
        usage: request.usage.map(({ meterSlug, quantity, maxQuantity }) => ({ meterSlug, quantity, maxQuantity })),
      });
      const parsed = checkResponse.safeParse(json);
      // The check always answers 200; anything else is a credential or server problem.
      if (status !== 200 || !parsed.success) throw new UsageApiError(`usage check answered ${status}`, status, json);
      return parsed.data;
    },

    async report(request) {
      validateItems(request.usage, false);
      const { status, json } = await post('v1/usage', {
        idempotencyKey: request.idempotencyKey,
        zcRequestId: request.zcRequestId,
        serviceSlug: request.serviceSlug,
        usage: request.usage.map(({ meterSlug, quantity }) => ({ meterSlug, quantity })),
      });
      if (status === 200 || status === 201) {
        const parsed = reportResponse.safeParse(json);
        if (parsed.success) return { ...parsed.data, ok: true };
      } else if (REFUSAL_STATUSES.has(status)) {
        const parsed = refusal.safeParse(json);
        if (parsed.success) return { ok: false, status: status as 402 | 404 | 409, ...parsed.data };
      }
      throw new UsageApiError(`usage report answered ${status}`, status, json);
    },
  };
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
