/** The spec's field rules for a page view (Page-view report request body), as stored. */

/** The path without its query string and fragment. */
export function pagePath(path: string): string {
  const end = path.search(/[?#]/);
  return end < 0 ? path : path.slice(0, end);
}

/** Codes edge networks send when they do not know (XX unknown, T1 Tor, A1/A2 proxies, O1 other, ZZ, EU/AP regions). */
const SENTINELS = new Set(['XX', 'T1', 'A1', 'A2', 'O1', 'ZZ', 'EU', 'AP']);

/** A two-letter country code, upper-cased; anything else, and the sentinels, is no country. */
export function countryCode(value: string | undefined): string | null {
  const code = value?.trim().toUpperCase();
  return code && /^[A-Z]{2}$/.test(code) && !SENTINELS.has(code) ? code : null;
}

/** The referrer's host, lower-cased, without port: from a host or from a full URL. */
export function referrerHost(value: string | undefined): string | null {
  const raw = value?.trim();
  if (!raw) return null;
  try {
    return new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`).hostname.toLowerCase() || null;
  } catch {
    return null;
  }
}
