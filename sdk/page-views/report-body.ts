import { type PageViewInput, pageViewInput } from '../../shared/schemas/page-views.js';

/**
 * What a page view reports (spec: Page view report request body), without `seller`, which the
 * reporter adds. The method is always GET, so there is no method field.
 */
export type PageView = Omit<PageViewInput, 'seller'>;

const OPTIONAL_FIELDS = [
  'status',
  'durationMs',
  'capturedAt',
  'journeyId',
  'userAgent',
  'accept',
  'clientIp',
  'country',
  'referrerHost',
] as const satisfies readonly (keyof PageView)[];

/**
 * The body of `POST /v1/page-views` for one view, checked field by field against the schema hub
 * itself validates with, so that hub never refuses a report this builds. An optional value hub
 * would refuse (a user agent past 2,048 characters, say) is left out rather than cut: a cut value
 * is one the visitor never sent, and hub treats a missing field as unknown. Undefined when the path
 * itself would be refused: a view without its page is not worth reporting.
 */
export function reportBody(seller: string, view: PageView): PageViewInput | undefined {
  const shape = pageViewInput.shape;
  const path = shape.path.safeParse(view.path);
  if (!path.success) return undefined;
  const body: PageViewInput = { seller, path: path.data };
  for (const field of OPTIONAL_FIELDS) {
    if (view[field] === undefined) continue;
    const checked = shape[field].safeParse(view[field]);
    if (checked.success && checked.data !== undefined) Object.assign(body, { [field]: checked.data });
  }
  return body;
}

/** The path of a request target: without query string and fragment, and without the origin of an absolute-form target. */
export function pathOf(target: string): string | undefined {
  let path = target;
  if (!path.startsWith('/')) {
    // `GET http://host/page HTTP/1.1` is a valid request line (absolute form); `*` and the rest are no page.
    try {
      path = new URL(target).pathname;
    } catch {
      return undefined;
    }
    if (!path.startsWith('/')) return undefined;
  }
  const end = path.search(/[?#]/);
  return end < 0 ? path : path.slice(0, end);
}

/**
 * The host of a Referer header, lower-cased and without port, or undefined. Only the host leaves
 * the seller's server: a referring URL's path and query can carry a visitor's tokens.
 */
export function referrerHostOf(referer: string | undefined): string | undefined {
  if (!referer) return undefined;
  try {
    const url = new URL(referer);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return url.hostname.toLowerCase() || undefined;
  } catch {
    return undefined;
  }
}
