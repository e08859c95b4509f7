import t from 'tap';
import { isInternalAddress } from '../../../control-plane/agentify/internal-address.js';

// The addresses agentify never fetches from behind a custom hostname, including IPv4 hidden
// inside IPv6 forms.

const internal = [
  '127.0.0.1',
  '127.255.255.254',
  '0.0.0.0',
  '10.0.0.1',
  '100.64.0.1',
  '169.254.169.254',
  '172.16.0.1',
  '172.31.255.255',
  '192.168.1.1',
  '192.0.2.1',
  '198.18.0.1',
  '224.0.0.1',
  '255.255.255.255',
  '::',
  '::1',
  'fe80::1',
  'fd12:3456::1',
  'ff02::1',
  '2001:db8::1',
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::ffff:a9fe:a9fe',
  '64:ff9b::10.0.0.1',
  'not an address',
];
const external = ['1.1.1.1', '8.8.8.8', '93.184.215.14', '172.32.0.1', '192.169.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'];

t.test('internal addresses', async (t) => {
  for (const address of internal) t.ok(isInternalAddress(address), address);
});

t.test('public addresses', async (t) => {
  for (const address of external) t.notOk(isInternalAddress(address), address);
});
