import fc from 'fast-check';
import t from 'tap';
import { checkTerms, parseExactPayment, windowFailure } from '../../../control-plane/facilitator/exact-payment.js';

/** Payments arrive from agents: parsing them never throws, whatever they hold. */

const token = { address: '0x5FbDB2315678afecb367f032d93F642f64180aa3' as const, name: 'Hub USD', version: '1' };
const requirements = {
  scheme: 'exact',
  network: 'eip155:31337',
  asset: token.address,
  amount: '10000',
  payTo: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  maxTimeoutSeconds: 60,
  extra: { name: 'Hub USD', version: '1' },
};
const valid = {
  x402Version: 2,
  accepted: requirements,
  payload: {
    signature: `0x${'11'.repeat(65)}`,
    authorization: {
      from: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
      to: requirements.payTo,
      value: '10000',
      validAfter: '0',
      validBefore: '99999999999',
      nonce: `0x${'22'.repeat(32)}`,
    },
  },
};

function parseAndCheck(payload: unknown, reqs: unknown): void {
  const parsed = parseExactPayment(payload, reqs);
  if ('failure' in parsed) return;
  checkTerms(parsed.payment, { network: 'eip155:31337', tokens: [token] });
  windowFailure(parsed.payment.authorization, 1_800_000_000n, 6n);
}

t.test('a valid payload parses', async (t) => {
  const parsed = parseExactPayment(valid, requirements);
  t.ok('payment' in parsed);
  if ('payment' in parsed) t.same(checkTerms(parsed.payment, { network: 'eip155:31337', tokens: [token] }), { token });
});

t.test('arbitrary values never throw', async () => {
  fc.assert(
    fc.property(fc.anything(), fc.anything(), (a, b) => void parseAndCheck(a, b)),
    { numRuns: 500 },
  );
});

t.test('a valid payload with any one field replaced never throws', async () => {
  const paths = [
    ['x402Version'],
    ['accepted'],
    ['accepted', 'network'],
    ['accepted', 'asset'],
    ['payload'],
    ['payload', 'signature'],
    ['payload', 'authorization'],
    ['payload', 'authorization', 'from'],
    ['payload', 'authorization', 'to'],
    ['payload', 'authorization', 'value'],
    ['payload', 'authorization', 'validAfter'],
    ['payload', 'authorization', 'validBefore'],
    ['payload', 'authorization', 'nonce'],
  ];
  const hostile = fc.oneof(
    fc.anything(),
    fc.string(),
    fc.constantFrom('1.5', '-1', '0x', '1e400', '9'.repeat(100), 'eip155:', ':', '__proto__'),
  );
  fc.assert(
    fc.property(fc.constantFrom(...paths), hostile, fc.boolean(), (path, value, inRequirements) => {
      const payload = structuredClone(valid) as Record<string, unknown>;
      const reqs = structuredClone(requirements) as Record<string, unknown>;
      let target: Record<string, unknown> = inRequirements && path[0] === 'accepted' ? reqs : payload;
      const keys = inRequirements && path[0] === 'accepted' ? path.slice(1) : path;
      if (keys.length === 0) return parseAndCheck(payload, value);
      for (const key of keys.slice(0, -1)) target = target[key] as Record<string, unknown>;
      target[keys.at(-1)!] = value;
      parseAndCheck(payload, reqs);
    }),
    { numRuns: 1_000 },
  );
});
