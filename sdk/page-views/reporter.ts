import type { IncomingMessage, ServerResponse } from 'node:http';
import { isId } from '../../shared/ids.js';
import type { PageViewInput } from '../../shared/schemas/page-views.js';
import { isPageContent, observePageView, type ServedResponse } from './observe.js';
import { type PageView, reportBody } from './report-body.js';

/**
 * Reports the pages a seller's site serves to hub (`POST /v1/page-views`, spec: Page view report
 * request body, Page-view rules), fire and forget: a view waits in a bounded queue and is sent in
 * the background, a few at a time; a view that does not get through is counted and let go, never
 * retried and never thrown into the seller's request. hub takes one view per request and answers
 * 204 before it stores anything, so the reporter sends each view as soon as a sender is free: there
 * is no batch to wait for, and `flush()` / `close()` settle what is queued.
 */
export type PageViewReporterOptions = {
  /** hub's control-plane base URL, such as `https://hub.example.com` (a path prefix is kept). */
  baseUrl: string;
  /** An API key (`hub_…`) with `page-views:write`. */
  apiKey: string;
  /** The `sel_…` id of the seller whose site serves the pages. */
  seller: string;
  /**
   * How many proxies of the seller's own (load balancers, CDN) stand in front of this server and
   * append to `X-Forwarded-For`. 0 (the default) reads the visitor's address from the socket and
   * ignores the header, which any client can write.
   */
  trustedProxies?: number;
  /** The header the seller's edge network puts the visitor's country in (`cf-ipcountry`); none by default, since a client can send any header. */
  countryHeader?: string;
  /** The reading-chain id a request carries, if the seller's site has one. */
  journeyId?: (req: IncomingMessage) => string | undefined;
  /** Which GET responses are pages; defaults to `isPageContent` (HTML, XHTML or Markdown, no redirect). */
  isPage?: (response: ServedResponse) => boolean;
  /** Views waiting to be sent, at most (default 1,000); past it, new views are dropped and counted. */
  maxQueue?: number;
  /** Views sent at once, at most (default 4). */
  concurrency?: number;
  /** Per view (default 2 s); a view that takes longer counts as failed. */
  timeoutMs?: number;
  /** Defaults to the global fetch (looked up per view); it must honour `signal`. */
  fetch?: typeof fetch;
  /** Told of each view hub did not take (never of drops: read `stats()`); a hook that throws is ignored. */
  onFailure?: (failure: PageViewFailure) => void;
};

/**
 * Why a view did not get through: no answer (`unreachable`, `timeout`), hub's 429 (`rate_limited`:
 * sending pauses as long as hub asks, up to a minute), another answer than 2xx (`rejected`, with
 * hub's `status` and `error`: a key without the scope, a seller of another organization), or
 * still in flight when `close()` ran out of time (`aborted`).
 */
export type PageViewFailure = {
  reason: 'unreachable' | 'timeout' | 'rate_limited' | 'rejected' | 'aborted';
  path: string;
  status?: number;
  error?: string;
};

/**
 * `pending` waiting and `sending` in flight now; since the start, `sent` (hub answered 2xx),
 * `failed` (see `PageViewFailure`), `dropped` (the queue was full, or the reporter closed) and
 * `invalid` (a view hub would refuse: a path over 2,048 characters).
 */
export type PageViewStats = { pending: number; sending: number; sent: number; failed: number; dropped: number; invalid: number };

export type PageViewReporter = {
  /**
   * Watches a `node:http` request and reports its response once served, if it is a GET page.
   * `target` is the request target as received, where a framework rewrote `req.url`.
   */
  track(req: IncomingMessage, res: ServerResponse, target?: string): void;
  /** Queues a view built elsewhere; false when it was dropped or invalid. */
  report(view: PageView): boolean;
  /** Resolves once every queued view has been sent or has failed. Never rejects. */
  flush(): Promise<void>;
  /**
   * Stops taking views and flushes, for at most `timeoutMs` (default 5 s); what is left then is
   * dropped or aborted. Resolves with the final counts; never rejects.
   */
  close(options?: { timeoutMs?: number }): Promise<PageViewStats>;
  stats(): PageViewStats;
};

const MAX_RATE_LIMIT_PAUSE_MS = 60_000;
/** Once `close()` has aborted what was in flight, how long it waits for the aborts to land. */
const ABORT_GRACE_MS = 1_000;

export function createPageViewReporter(options: PageViewReporterOptions): PageViewReporter {
  const settings = checkedOptions(options);
  const endpoint = new URL('v1/page-views', options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
  // The global fetch is looked up per view, so instrumentation installed after this (tracing, a
  // test's fault injection) sees these requests too.
  const doFetch: typeof fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const headers = { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' };
  const observe = {
    trustedProxies: settings.trustedProxies,
    countryHeader: options.countryHeader?.toLowerCase(),
    journeyId: options.journeyId,
    isPage: options.isPage ?? isPageContent,
  };

  const queue: PageViewInput[] = [];
  const counts = { sending: 0, sent: 0, failed: 0, dropped: 0, invalid: 0 };
  const idleWaiters: (() => void)[] = [];
  // Aborts what is in flight when close() runs out of time.
  const closing = new AbortController();
  let closed = false;
  let pausedUntil = 0;
  let pauseTimer: NodeJS.Timeout | undefined;

  const stats = (): PageViewStats => ({ pending: queue.length, ...counts });
  const idle = () => queue.length === 0 && counts.sending === 0;

  function report(view: PageView): boolean {
    if (closed) {
      counts.dropped++;
      return false;
    }
    const body = reportBody(options.seller, view);
    if (body === undefined) {
      counts.invalid++;
      return false;
    }
    if (queue.length >= settings.maxQueue) {
      counts.dropped++;
      return false;
    }
    queue.push(body);
    pump();
    return true;
  }

  function pump(): void {
    const waitMs = pausedUntil - Date.now();
    if (waitMs > 0) {
      // The timer does not keep the seller's process alive: close() is what waits for views.
      pauseTimer ??= setTimeout(() => {
        pauseTimer = undefined;
        pump();
      }, waitMs).unref();
      return;
    }
    while (counts.sending < settings.concurrency && queue.length > 0) {
      counts.sending++;
      void deliver(queue.shift()!);
    }
  }

  /** Sends one view and counts the outcome. Resolves, whatever happens: nothing awaits it. */
  async function deliver(body: PageViewInput): Promise<void> {
    let failure: PageViewFailure | undefined;
    try {
      failure = await send(body);
    } catch (err) {
      failure = { reason: failureReason(err), path: body.path };
    }
    counts.sending--;
    if (failure === undefined) counts.sent++;
    else {
      counts.failed++;
      try {
        options.onFailure?.(failure);
      } catch {
        // The seller's hook is theirs to get right; a view's failure stays a no-op.
      }
    }
    pump();
    if (idle()) for (const resolve of idleWaiters.splice(0)) resolve();
  }

  async function send(body: PageViewInput): Promise<PageViewFailure | undefined> {
    const response = await doFetch(endpoint, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal: AbortSignal.any([AbortSignal.timeout(settings.timeoutMs), closing.signal]),
      redirect: 'error',
    });
    // hub's 204 has no body; any other answer's is read, so the connection is free for the next view.
    const text = await response.text();
    if (response.ok) return undefined;
    const answer = parsedError(text);
    if (response.status === 429) pauseFor(answer.retryAfterSeconds ?? Number(response.headers.get('retry-after')));
    return {
      reason: response.status === 429 ? 'rate_limited' : 'rejected',
      path: body.path,
      status: response.status,
      ...(answer.error === undefined ? {} : { error: answer.error }),
    };
  }

  /** hub's per-organization budget is spent: hold every view until it says to come back (spec: Page-views route, 429). */
  function pauseFor(seconds: number): void {
    const ms = Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds * 1000, MAX_RATE_LIMIT_PAUSE_MS) : 1_000;
    pausedUntil = Math.max(pausedUntil, Date.now() + ms);
  }

  function failureReason(err: unknown): PageViewFailure['reason'] {
    if (closing.signal.aborted) return 'aborted';
    return (err as Error | undefined)?.name === 'TimeoutError' ? 'timeout' : 'unreachable';
  }

  function whenIdle(): Promise<void> {
    return idle() ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve));
  }

  return {
    track(req, res, target) {
      observePageView(req, res, target, observe, report);
    },
    report,
    flush: whenIdle,
    stats,
    async close(closeOptions = {}) {
      closed = true;
      await settledWithin(whenIdle(), closeOptions.timeoutMs ?? 5_000);
      if (!idle()) {
        counts.dropped += queue.length;
        queue.length = 0;
        closing.abort();
        await settledWithin(whenIdle(), ABORT_GRACE_MS);
      }
      clearTimeout(pauseTimer);
      return stats();
    },
  };
}

function checkedOptions(options: PageViewReporterOptions) {
  try {
    new URL(options.baseUrl);
  } catch {
    throw new TypeError('baseUrl must be an absolute URL, such as https://hub.example.com');
  }
  if (typeof options.apiKey !== 'string' || !options.apiKey) throw new TypeError('apiKey is required');
  if (!isId('seller', options.seller)) throw new TypeError('seller must be a seller id (sel_…)');
  const whole = (name: string, value: number | undefined, fallback: number, min: number) => {
    const n = value ?? fallback;
    if (!Number.isSafeInteger(n) || n < min) throw new RangeError(`${name} must be a whole number from ${min}`);
    return n;
  };
  return {
    trustedProxies: whole('trustedProxies', options.trustedProxies, 0, 0),
    maxQueue: whole('maxQueue', options.maxQueue, 1_000, 1),
    concurrency: whole('concurrency', options.concurrency, 4, 1),
    timeoutMs: whole('timeoutMs', options.timeoutMs, 2_000, 1),
  };
}

/** `{ error, retryAfterSeconds }` of hub's error envelope, as far as the text is one. */
function parsedError(text: string): { error?: string; retryAfterSeconds?: number } {
  try {
    const body: unknown = JSON.parse(text);
    if (typeof body !== 'object' || body === null) return {};
    const { error, retryAfterSeconds } = body as Record<string, unknown>;
    return {
      ...(typeof error === 'string' ? { error } : {}),
      ...(typeof retryAfterSeconds === 'number' ? { retryAfterSeconds } : {}),
    };
  } catch {
    return {};
  }
}

/** Waits for `promise`, or for `ms`, whichever comes first. */
async function settledWithin(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
