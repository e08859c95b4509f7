import { isIP } from 'node:net';

/**
 * The visitor's IP address. Without trusted proxies it is the socket's peer: an `X-Forwarded-For`
 * header is then only the client's claim, and anyone could pose as any number of viewers.
 *
 * Behind `trustedProxies` proxies of the seller's own (a load balancer is one), each proxy appends
 * the address it was reached from to `X-Forwarded-For`. Reading from the socket outwards, hop `n`
 * is the address proxy `n` saw, so the visitor is hop `trustedProxies`: entries further left were
 * written before the request reached a trusted proxy, by whoever sent it, and are not read. When
 * fewer hops arrived than proxies are configured, the furthest one is the visitor (every entry
 * there was written by a trusted proxy).
 *
 * An address that is not an IP (a hostile or broken header) gives undefined, never a guess: hub
 * then counts the view without an address.
 */
export function visitorAddress(
  socketAddress: string | undefined,
  forwardedFor: string | string[] | undefined,
  trustedProxies: number,
): string | undefined {
  if (trustedProxies <= 0) return normalizedIp(socketAddress);
  const header = Array.isArray(forwardedFor) ? forwardedFor.join(',') : (forwardedFor ?? '');
  const hops = [
    socketAddress,
    ...header
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean)
      .reverse(),
  ];
  return normalizedIp(hops[Math.min(trustedProxies, hops.length - 1)]);
}

/**
 * An IP in one spelling: without the port or brackets some proxies add (`203.0.113.7:51234`,
 * `[2001:db8::1]:443`), and an IPv4 address mapped into IPv6 (`::ffff:203.0.113.7`, what a
 * dual-stack socket reports) as plain IPv4, so one visitor is one viewer however it arrived.
 */
export function normalizedIp(value: string | undefined): string | undefined {
  if (!value) return undefined;
  let address = value.trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(address);
  if (bracketed) address = bracketed[1]!;
  else if (/^[\d.]+:\d{1,5}$/.test(address)) address = address.slice(0, address.lastIndexOf(':'));
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) address = mapped[1]!;
  return isIP(address) ? address.toLowerCase() : undefined;
}
