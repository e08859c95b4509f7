import type { IncomingMessage, OutgoingHttpHeader, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { type PageView, pathOf, referrerHostOf } from './report-body.js';
import { visitorAddress } from './visitor-address.js';

/** What decides whether a served response was a page: its path, final status and media type. */
export type ServedResponse = { path: string; status: number; contentType: string | undefined };

export type ObserveSettings = {
  trustedProxies: number;
  /** Lower-cased name of the header the seller's edge network puts the visitor's country in. */
  countryHeader: string | undefined;
  journeyId: ((req: IncomingMessage) => string | undefined) | undefined;
  isPage: (response: ServedResponse) => boolean;
};

const PAGE_TYPES = new Set(['text/html', 'application/xhtml+xml', 'text/markdown']);

/**
 * The default test for page content: an HTML, XHTML or Markdown answer (Markdown is what agents
 * ask a page for), whatever its status but a redirect's. A redirect's body is not read (the page
 * is where it points, reported when served), and a 304 sends none. Scripts, styles, images, JSON
 * APIs and health checks are not pages.
 */
export function isPageContent(response: ServedResponse): boolean {
  if (response.status >= 300 && response.status < 400) return false;
  if (response.contentType === undefined) return false;
  return PAGE_TYPES.has(response.contentType.split(';', 1)[0]!.trim().toLowerCase());
}

const observed = new WeakSet<IncomingMessage>();

/**
 * Watches one request: a GET's response, once sent in full, becomes a page view for `onView` when
 * `isPage` says so. Everything about the request (address, headers, path) is read as it arrives;
 * status, media type, duration and time when the response has finished. A response the visitor
 * abandoned before it was sent in full was not served and is not reported. A request watched
 * already (two bindings mounted) is watched once.
 *
 * Nothing here throws into the seller's request: a value that cannot be read is left out of the
 * view, and a failure while building it (the seller's own `isPage` or `journeyId` throwing
 * included) drops that one view.
 */
export function observePageView(
  req: IncomingMessage,
  res: ServerResponse,
  target: string | undefined,
  settings: ObserveSettings,
  onView: (view: PageView) => void,
): void {
  // spec: Page-view rules: only page-content GET requests are reported. HEAD sends no content.
  if (req.method !== 'GET' || observed.has(req)) return;
  observed.add(req);
  const startedAt = performance.now();
  let facts: RequestFacts | undefined;
  try {
    facts = requestFacts(req, target, settings);
  } catch {
    return;
  }
  if (facts === undefined) return;
  const arrived = facts;
  const contentType = contentTypeOf(res);
  res.once('finish', () => {
    try {
      const status = res.statusCode;
      if (!settings.isPage({ path: arrived.path, status, contentType: contentType() })) return;
      onView({
        ...arrived,
        status,
        durationMs: Math.round((performance.now() - startedAt) * 1000) / 1000,
        // The moment the page was served in full, on this server's clock: measured, not invented.
        capturedAt: new Date().toISOString(),
      });
    } catch {
      // A 'finish' listener that throws would end the seller's process; one lost view would not.
    }
  });
}

/** What the request itself tells: everything in a view but what the response decides. */
type RequestFacts = Omit<PageView, 'status' | 'durationMs' | 'capturedAt'>;

function requestFacts(req: IncomingMessage, target: string | undefined, settings: ObserveSettings): RequestFacts | undefined {
  const path = pathOf(target ?? req.url ?? '');
  if (path === undefined) return undefined;
  const headers = req.headers;
  return {
    path,
    userAgent: firstValue(headers['user-agent']),
    accept: firstValue(headers.accept),
    clientIp: visitorAddress(req.socket?.remoteAddress, headers['x-forwarded-for'], settings.trustedProxies),
    country: settings.countryHeader ? firstValue(headers[settings.countryHeader])?.trim() || undefined : undefined,
    referrerHost: referrerHostOf(firstValue(headers.referer)),
    journeyId: settings.journeyId?.(req),
  };
}

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The response's media type, however it was set. `res.getHeader` only knows headers given to
 * `setHeader`: headers passed straight to `writeHead` (as plain `node:http` code and Fastify do)
 * go to the wire without being kept, so `writeHead` is wrapped for this one response to note
 * them on their way through, unchanged.
 */
function contentTypeOf(res: ServerResponse): () => string | undefined {
  let written: string | undefined;
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    try {
      written = contentTypeIn(args.find((arg) => typeof arg === 'object' && arg !== null)) ?? written;
    } catch {
      // Reading the headers must not stop them from being written.
    }
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as ServerResponse['writeHead'];
  return () => headerText(res.getHeader('content-type')) ?? written;
}

/** `content-type` in `writeHead`'s headers: an object, a flat `[name, value, …]` list or `[name, value]` pairs. */
function contentTypeIn(headers: unknown): string | undefined {
  if (Array.isArray(headers)) {
    if (headers.every(Array.isArray)) {
      const pair = (headers as [string, OutgoingHttpHeader][]).find(([name]) => String(name).toLowerCase() === 'content-type');
      return headerText(pair?.[1]);
    }
    for (let i = 0; i + 1 < headers.length; i += 2) {
      if (String(headers[i]).toLowerCase() === 'content-type') return headerText(headers[i + 1] as OutgoingHttpHeader);
    }
    return undefined;
  }
  if (headers === undefined) return undefined;
  const entry = Object.entries(headers as OutgoingHttpHeaders).find(([name]) => name.toLowerCase() === 'content-type');
  return headerText(entry?.[1]);
}

function headerText(value: OutgoingHttpHeader | undefined): string | undefined {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value[0] : String(value);
}
