import fc from 'fast-check';
import { Receipt as MppxReceipt } from 'mppx';
import t from 'tap';
import { base64urlEncode } from '../../../../shared/payments/mpp/encoding.js';
import { createReceipt, parseReceipt, serializeReceipt } from '../../../../shared/payments/mpp/index.js';

const reference = `0x${'ab'.repeat(32)}`;

t.test('a receipt round-trips, and mppx reads ours and we read mppx’s', async (t) => {
  const receipt = createReceipt({ reference, timestamp: new Date('2030-01-01T00:00:00Z') });
  t.same(receipt, { method: 'evm', reference, status: 'success', timestamp: '2030-01-01T00:00:00.000Z' });
  const header = serializeReceipt(receipt);
  t.match(header, /^[A-Za-z0-9_-]+$/);
  t.same(parseReceipt(header), { ok: true, value: receipt });
  t.same(MppxReceipt.deserialize(header), receipt);
  const theirs = MppxReceipt.serialize(
    MppxReceipt.from({ method: 'evm', reference, status: 'success', timestamp: '2030-01-01T00:00:00Z', externalId: 'x' }),
  );
  t.match(parseReceipt(theirs), { ok: true, value: { method: 'evm', externalId: 'x' } });
});

t.test('refuses what is not a success receipt', async (t) => {
  const encode = (v: unknown) => base64urlEncode(JSON.stringify(v));
  const good = createReceipt({ reference });
  for (const bad of [
    encode({ ...good, status: 'failed' }),
    encode({ ...good, timestamp: 'yesterday' }),
    encode({ ...good, method: '' }),
    encode({ ...good, reference: 1 }),
    encode([good]),
    'not base64!',
    'A'.repeat(5000),
  ]) {
    t.match(parseReceipt(bad), { ok: false, reason: 'malformed_receipt' });
  }
});

t.test('fuzz: parsing never throws', async () => {
  fc.assert(
    fc.property(fc.oneof(fc.anything(), fc.string({ unit: 'binary' })), (v) => void parseReceipt(v)),
    { numRuns: 1000 },
  );
  const fields = fc.dictionary(fc.constantFrom('method', 'reference', 'status', 'timestamp', 'externalId'), fc.jsonValue());
  fc.assert(
    fc.property(fields, (v) => void parseReceipt(base64urlEncode(JSON.stringify(v)))),
    { numRuns: 1000 },
  );
});
