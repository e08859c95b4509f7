/**
 * Pay URL hosts: `{sellerSlug}.{payDomain}`, plus custom hostnames a seller points at hub.
 * Seller slugs are DNS labels, so a slug maps to exactly one host and back.
 */
export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** No DNS name is longer; a longer Host header names nothing hub could serve. */
const MAX_HOST_LENGTH = 253;

/** Lowercased host without port (handles `[::1]:8402` and trailing dots); undefined for none or an impossible one. */
export function normalizeHost(hostHeader: string | undefined): string | undefined {
  if (!hostHeader || hostHeader.length > MAX_HOST_LENGTH + 7) return undefined; // 7: `:` and a port
  let host = hostHeader.trim().toLowerCase();
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return end > 0 ? host.slice(0, end + 1) : undefined;
  }
  const colon = host.indexOf(':');
  if (colon >= 0) host = host.slice(0, colon);
  host = host.replace(/\.+$/, '');
  return host && host.length <= MAX_HOST_LENGTH ? host : undefined;
}

/** The seller slug a pay host names, or undefined when the host is not under the pay domain. */
export function slugFromPayHost(host: string, payDomain: string): string | undefined {
  const suffix = `.${payDomain}`;
  if (!host.endsWith(suffix)) return undefined;
  const slug = host.slice(0, -suffix.length);
  return SLUG_PATTERN.test(slug) ? slug : undefined;
}

export function payHostOf(slug: string, payDomain: string): string {
  return `${slug}.${payDomain}`;
}
