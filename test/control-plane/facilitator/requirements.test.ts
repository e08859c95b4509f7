import t from 'tap';
import { exactRequirements } from '../../../control-plane/payments/requirements.js';
import { paymentRequirementsSchema } from '../../../shared/payments/x402-wire.js';

t.test('exact requirements carry the price in token units and the token’s EIP-712 domain', async (t) => {
  const token = { address: '0x5fbdb2315678afecb367f032d93f642f64180aa3' as const, name: 'Hub USD', version: '1', decimals: 6 };
  const requirements = exactRequirements({
    priceMicros: 10_000n,
    network: 'eip155:31337',
    token,
    payTo: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
    maxTimeoutSeconds: 60,
  });
  t.same(requirements, {
    scheme: 'exact',
    network: 'eip155:31337',
    asset: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
    amount: '10000',
    payTo: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    maxTimeoutSeconds: 60,
    extra: { name: 'Hub USD', version: '1' },
  });
  t.ok(paymentRequirementsSchema.safeParse(requirements).success);
  t.equal(exactRequirements({ ...requirements, priceMicros: 1n, token: { ...token, decimals: 18 } }).amount, '1000000000000');
  t.equal(
    exactRequirements({ ...requirements, priceMicros: 1n, token: { ...token, decimals: 2 } }).amount,
    '1',
    'rounds up for tokens coarser than micro-USD',
  );
});

t.test('the wire schema refuses amounts that are not uint256 decimal strings', async (t) => {
  const base = { scheme: 'exact', network: 'eip155:1', asset: '0x', payTo: '0x', maxTimeoutSeconds: 1, extra: {} };
  for (const amount of ['-1', '1.5', '01', '0x10', '1e3', (2n ** 256n).toString(), '']) {
    t.notOk(paymentRequirementsSchema.safeParse({ ...base, amount }).success, `refuses ${amount}`);
  }
  t.notOk(paymentRequirementsSchema.safeParse({ ...base, amount: '1', network: 'eip155' }).success, 'refuses a network that is not CAIP-2');
  t.ok(paymentRequirementsSchema.safeParse({ ...base, amount: (2n ** 256n - 1n).toString() }).success);
});
