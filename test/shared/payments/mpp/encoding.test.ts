import fc from 'fast-check';
import { PaymentRequest } from 'mppx';
import t from 'tap';
import {
  base64urlDecode,
  base64urlEncode,
  canonicalJson,
  decodeBase64urlJson,
  isDatetime,
} from '../../../../shared/payments/mpp/encoding.js';

t.test('base64url decodes what it encodes, and only the canonical spelling of it', async (t) => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      const text = base64urlEncode(bytes);
      // Padded input is accepted when the padding is right.
      const padded = text + '='.repeat((4 - (text.length % 4)) % 4);
      return Buffer.from(bytes).equals(base64urlDecode(text)!) && Buffer.from(bytes).equals(base64urlDecode(padded)!);
    }),
    { numRuns: 200 },
  );
  for (const bad of ['a', 'ab=', 'a===', 'ab+c', 'ab/c', 'ab c', 'QQ=x', 'QR', 'QR==']) {
    t.equal(base64urlDecode(bad), undefined, `refuses ${JSON.stringify(bad)}`);
  }
  t.same(base64urlDecode('QQ'), Buffer.from('A'));
});

t.test('JSON decoding refuses invalid UTF-8 and non-JSON', async (t) => {
  t.equal(decodeBase64urlJson(base64urlEncode(new Uint8Array([0x7b, 0xff, 0x7d]))), undefined);
  t.equal(decodeBase64urlJson(base64urlEncode('{"a":')), undefined);
  t.same(decodeBase64urlJson(base64urlEncode('{"a":[1,"é"]}')), { a: [1, 'é'] });
  fc.assert(fc.property(fc.string({ maxLength: 200 }), (s) => void decodeBase64urlJson(s)));
});

t.test('canonical JSON is what mppx binds challenge ids to', async (t) => {
  // mppx serializes a challenge request as base64url of RFC 8785 JSON; so must we, byte for byte.
  fc.assert(
    fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 4 })), (request) => {
      const ours = canonicalJson(request);
      return ours !== undefined && base64urlEncode(ours) === PaymentRequest.serialize(request);
    }),
    { numRuns: 300 },
  );
  t.equal(canonicalJson({ b: 1, a: { d: [true, null], c: 'x' }, u: undefined }), '{"a":{"c":"x","d":[true,null]},"b":1}');
  t.equal(canonicalJson({ n: 1n }), undefined, 'bigint is not JSON');
  t.equal(canonicalJson({ n: Number.POSITIVE_INFINITY }), undefined);
  let deep: unknown = 1;
  for (let i = 0; i < 10_000; i++) deep = [deep];
  t.equal(canonicalJson(deep), undefined, 'deep nesting is refused, not a stack overflow');
});

t.test('datetimes are RFC 3339 instants', async (t) => {
  for (const good of ['2025-01-06T12:00:00Z', '2025-01-06T12:00:00.123Z', '2025-01-06T12:00:00+02:00']) t.ok(isDatetime(good), good);
  for (const bad of ['2025-01-06', '2025-13-06T12:00:00Z', '2025-01-06 12:00:00Z', 1736164800, 'x']) t.notOk(isDatetime(bad), String(bad));
});
