import type { RequestView } from '../../runtime/request-view.js';
import { isHostHeader } from './request-target.js';

/**
 * The scheme and host an agent used to reach the pay URL, for the URLs hub hands back (a
 * challenge's resource, the registration endpoints) and the `x-forwarded-proto` the seller sees.
 * The proxy itself speaks plain HTTP. Behind a reverse proxy that terminates TLS, `HUB_TRUST_PROXY=on`
 * takes what that proxy reports in `X-Forwarded-Proto` and `X-Forwarded-Host` (the first value of
 * each, when well formed); otherwise those headers are only the client's word and are ignored.
 */
export type PublicOrigin = { scheme: 'http' | 'https'; host: string };

export function publicOrigin(req: RequestView, trustProxy: boolean): PublicOrigin {
  const direct: PublicOrigin = {
    scheme: req.socket.encrypted ? 'https' : 'http',
    host: req.headers.host ?? '',
  };
  if (!trustProxy) return direct;
  const proto = firstValue(req.headers['x-forwarded-proto'])?.toLowerCase();
  const host = firstValue(req.headers['x-forwarded-host']);
  return {
    scheme: proto === 'https' || proto === 'http' ? proto : direct.scheme,
    host: host && isHostHeader(host) ? host : direct.host,
  };
}

export function originUrl(origin: PublicOrigin): string {
  return origin.host ? `${origin.scheme}://${origin.host}` : '';
}

function firstValue(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  return value?.split(',', 1)[0]?.trim() || undefined;
}
