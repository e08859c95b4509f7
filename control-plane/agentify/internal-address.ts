import { BlockList, isIP } from 'node:net';

/**
 * Addresses that are not on the public internet: loopback, private and shared (CGNAT) ranges,
 * link-local (cloud metadata lives at 169.254.169.254), unique-local IPv6, multicast, reserved and
 * documentation ranges. Agentify refuses to fetch from them unless the seller itself named the
 * host as its upstream (owned-hosts.ts): hub runs beside the seller's API, so its own ports, the
 * database and the cloud's metadata service are all one hop away.
 */
const internal = new BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  internal.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 127], // :: and ::1
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  internal.addSubnet(prefix, bits, 'ipv6');
}

/** Whether `address` (an IP literal) is internal; an IPv4 address inside IPv6 is judged as IPv4. */
export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return internal.check(address, 'ipv4');
  if (family !== 6) return true;
  const embedded = embeddedIpv4(address.toLowerCase());
  if (embedded) return internal.check(embedded, 'ipv4');
  return internal.check(address, 'ipv6');
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
