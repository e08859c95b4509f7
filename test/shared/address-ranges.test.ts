import t from 'tap';
import { addressScope, isInternalAddress } from '../../shared/address-ranges.js';

// What part of the network an address is on, including IPv4 hidden inside IPv6 forms.

const scopes = {
  loopback: ['127.0.0.1', '127.255.255.254', '0.0.0.0', '::', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1'],
  'link-local': [
    '169.254.169.254',
    '169.254.0.1',
    'fe80::1',
    'fd00:ec2::254',
    'fd00:ec2:0:0:0:0:0:254',
    '100.100.100.200',
    '::ffff:a9fe:a9fe',
    '::ffff:169.254.169.254',
  ],
  private: [
    '10.0.0.1',
    '100.64.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '192.0.2.1',
    '198.18.0.1',
    '224.0.0.1',
    '255.255.255.255',
    'fd12:3456::1',
    'fd00:ec2::253',
    'ff02::1',
    '2001:db8::1',
    '64:ff9b::10.0.0.1',
  ],
  public: ['1.1.1.1', '8.8.8.8', '93.184.215.14', '172.32.0.1', '192.169.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'],
} as const;

for (const [scope, addresses] of Object.entries(scopes)) {
  t.test(`${scope} addresses`, async (t) => {
    for (const address of addresses) {
      t.equal(addressScope(address), scope, address);
      t.equal(isInternalAddress(address), scope !== 'public', `${address} internal`);
    }
  });
}

t.test('anything else is no address, and internal', async (t) => {
  t.equal(addressScope('not an address'), undefined);
  t.ok(isInternalAddress('not an address'));
});
