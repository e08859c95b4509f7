import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/**
 * The address a request came from, for limits that count per client: the socket's peer, or,
 * behind a reverse proxy hub is told to trust (`HUB_TRUST_PROXY=on`), the address that proxy
 * appended to `X-Forwarded-For` (its last entry; the ones before it are whatever the client
 * sent). Without that setting the header is ignored: anyone can write one.
 *
 * An IPv6 client counts as its /64, the block one subscriber usually holds: counting single
 * addresses would give each of them 2^64 fresh ones.
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const forwarded = trustProxy ? lastForwardedFor(req.headers['x-forwarded-for']) : undefined;
  return addressKey(forwarded ?? req.socket.remoteAddress ?? 'unknown');
}

function lastForwardedFor(header: string | string[] | undefined): string | undefined {
  const joined = Array.isArray(header) ? header.join(',') : header;
  const last = joined?.split(',').at(-1)?.trim();
  return last && isIP(last) ? last : undefined;
}

export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (isIP(address) !== 6) return address;
  return `${expandIpv6(address).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of an IPv6 address, `::` filled in (a zone after `%` dropped). */
function expandIpv6(address: string): string[] {
  const [head = '', tail] = address.split('%')[0]!.toLowerCase().split('::');
  const groups = (part: string) => (part ? part.split(':') : []);
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const zeros = Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((group) => group.replace(/^0+(?=.)/, ''));
}
