import { BlockList, isIP } from 'node:net';

/**
 * What part of the network an IP address is on, the one classification behind every outbound
 * connection hub makes on a seller's say-so (runtime/upstream-addresses.ts): the seller's API, its
 * account endpoint, agentify's pages. Hub runs beside the seller's API, so its own ports, the
 * database and the cloud's metadata service are all one hop away.
 *
 * - `loopback`: this machine (127/8, ::1, and 0.0.0.0/8 and ::, which connect here too);
 * - `link-local`: 169.254/16 and fe80::/10, where cloud metadata services answer, plus the
 *   metadata addresses clouds put elsewhere (fd00:ec2::254, 100.100.100.200);
 * - `private`: everything else that is not the public internet: private and shared (CGNAT)
 *   ranges, unique-local IPv6, multicast, reserved and documentation ranges;
 * - `public`: the rest.
 */
export type AddressScope = 'public' | 'private' | 'loopback' | 'link-local';

function blockList(ranges: readonly (readonly [string, number])[], family: 'ipv4' | 'ipv6'): BlockList {
  const list = new BlockList();
  for (const [prefix, bits] of ranges) list.addSubnet(prefix, bits, family);
  return list;
}

const loopback4 = blockList(
  [
    ['0.0.0.0', 8],
    ['127.0.0.0', 8],
  ],
  'ipv4',
);
const linkLocal4 = blockList(
  [
    ['169.254.0.0', 16],
    ['100.100.100.200', 32], // Alibaba Cloud's metadata service
  ],
  'ipv4',
);
const private4 = blockList(
  [
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.0.2.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['198.51.100.0', 24],
    ['203.0.113.0', 24],
    ['224.0.0.0', 4],
    ['240.0.0.0', 4],
  ],
  'ipv4',
);
const loopback6 = blockList([['::', 127]], 'ipv6'); // :: and ::1
const linkLocal6 = blockList(
  [
    ['fe80::', 10],
    ['fd00:ec2::254', 128], // AWS's metadata service over IPv6
  ],
  'ipv6',
);
const private6 = blockList(
  [
    ['64:ff9b:1::', 48], // local-use NAT64
    ['100::', 64], // discard-only
    ['2001:db8::', 32], // documentation
    ['fc00::', 7], // unique local
    ['ff00::', 8], // multicast
  ],
  'ipv6',
);

/** The scope of an IP literal; undefined for anything that is not one. IPv4 inside IPv6 is judged as IPv4. */
export function addressScope(address: string): AddressScope | undefined {
  const family = isIP(address);
  if (family === 0) return undefined;
  const lower = address.toLowerCase();
  const v4 = family === 4 ? address : embeddedIpv4(lower);
  if (v4 !== undefined) {
    if (linkLocal4.check(v4, 'ipv4')) return 'link-local';
    if (loopback4.check(v4, 'ipv4')) return 'loopback';
    return private4.check(v4, 'ipv4') ? 'private' : 'public';
  }
  if (linkLocal6.check(address, 'ipv6')) return 'link-local';
  if (loopback6.check(address, 'ipv6')) return 'loopback';
  return private6.check(address, 'ipv6') ? 'private' : 'public';
}

/** Whether `address` is anything but a public IP address (a non-address counts as internal). */
export function isInternalAddress(address: string): boolean {
  return addressScope(address) !== 'public';
}

/** The IPv4 address an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::a.b.c.d) address carries. */
function embeddedIpv4(address: string): string | undefined {
  const match = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/.exec(address);
  if (!match) return undefined;
  if (match[1]) return match[1];
  const high = Number.parseInt(match[2]!, 16);
  const low = Number.parseInt(match[3]!, 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}
