import type { IncomingMessage } from 'node:http';
import t from 'tap';
import { addressKey, clientAddress } from '../../../control-plane/auth/client-address.js';

const request = (remoteAddress: string, forwardedFor?: string | string[]) =>
  ({
    socket: { remoteAddress },
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  }) as unknown as IncomingMessage;

t.test('IPv4 counts as itself, an IPv4-mapped IPv6 peer as its IPv4 address', async (t) => {
  t.equal(addressKey('203.0.113.7'), '203.0.113.7');
  t.equal(addressKey('::ffff:203.0.113.7'), '203.0.113.7');
});

t.test('an IPv6 client counts as its /64, however it writes its address', async (t) => {
  t.equal(addressKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd'), '2001:db8:1:2::/64');
  t.equal(addressKey('2001:0db8:0001:0002::1'), '2001:db8:1:2::/64');
  t.equal(addressKey('2001:db8::1'), '2001:db8:0:0::/64');
  t.equal(addressKey('::1'), '0:0:0:0::/64');
  t.equal(addressKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
});

t.test('X-Forwarded-For: ignored unless trusted, then its last entry', async (t) => {
  t.equal(clientAddress(request('127.0.0.1', '198.51.100.1'), false), '127.0.0.1');
  t.equal(clientAddress(request('127.0.0.1', '203.0.113.9, 198.51.100.1'), true), '198.51.100.1');
  t.equal(clientAddress(request('127.0.0.1', ['203.0.113.9', '198.51.100.2']), true), '198.51.100.2', 'repeated headers');
  t.equal(clientAddress(request('127.0.0.1', 'not-an-address'), true), '127.0.0.1', 'nothing usable: the peer');
  t.equal(clientAddress(request('127.0.0.1'), true), '127.0.0.1');
});
