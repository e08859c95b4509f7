import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import t from 'tap';
import {
  canonicalString,
  formatSignatureHeader,
  parseSignatureHeader,
  SIGNATURE_TOLERANCE_SECONDS,
  type SignaturePurpose,
  sha256Hex,
  signatureHeader,
  verifySignature,
} from '../../shared/signature.js';

// spec: Authentication › Request signature, Account-route signature. The vectors were computed with
// openssl and sha256sum, not with the module under test.
type VectorRequest = {
  method: string;
  pathAndQuery: string;
  body?: string;
  bodyHex?: string;
  requestId: string;
  agentId: string | null;
  purpose?: SignaturePurpose;
};
type Vectors = {
  toleranceSeconds: number;
  secrets: Record<string, string>;
  signing: {
    name: string;
    input: VectorRequest & { timestamp: number; kid: string; sandbox: boolean };
    bodySha256: string;
    canonical: string;
    header: string;
  }[];
  verifying: {
    name: string;
    header: unknown;
    request: VectorRequest;
    now: number;
    expected: { ok: true; kid: string; sandbox: boolean } | { ok: false; reason: string };
  }[];
};
const vectors = JSON.parse(readFileSync(new URL('../../docs/signature-vectors.json', import.meta.url), 'utf8')) as Vectors;
const bodyOf = (r: VectorRequest) => (r.bodyHex !== undefined ? Buffer.from(r.bodyHex, 'hex') : Buffer.from(r.body ?? '', 'utf8'));
const secretFor = (kid: string) => vectors.secrets[kid];

t.test('the published vectors cover what the issue lists', async (t) => {
  t.equal(vectors.toleranceSeconds, SIGNATURE_TOLERANCE_SECONDS);
  const inputs = vectors.signing.map((v) => v.input);
  t.ok(
    inputs.some((i) => i.sandbox),
    'sandbox',
  );
  t.ok(inputs.some((i) => i.purpose === 'access.write') && inputs.some((i) => i.purpose === 'access.mint'), 'both purpose lines');
  t.ok(
    inputs.some((i) => i.body === '' && i.bodyHex === undefined),
    'empty body',
  );
  t.ok(inputs.some((i) => i.bodyHex !== undefined) && inputs.some((i) => /[^\x00-\x7f]/.test(i.body ?? '')), 'non-ASCII bodies');
  t.ok(
    inputs.some((i) => i.pathAndQuery.includes('..') && i.pathAndQuery.includes('%')),
    'odd paths',
  );
  const reasons = new Set(vectors.verifying.map((v) => (v.expected.ok ? 'ok' : v.expected.reason)));
  t.same([...reasons].sort(), ['invalid_signature', 'missing_or_malformed_signature', 'ok', 'stale_timestamp', 'unknown_kid']);
});

t.test('signing reproduces every vector', async (t) => {
  for (const v of vectors.signing) {
    const { kid, sandbox, timestamp, agentId, ...request } = v.input;
    const bodySha256 = sha256Hex(bodyOf(v.input));
    t.equal(bodySha256, v.bodySha256, `${v.name}: body digest`);
    const input = {
      timestamp,
      method: request.method,
      pathAndQuery: request.pathAndQuery,
      bodySha256,
      requestId: request.requestId,
      agentId: agentId ?? undefined,
      purpose: request.purpose,
    };
    t.equal(canonicalString(input), v.canonical, `${v.name}: canonical string`);
    t.equal(signatureHeader({ ...input, kid, secret: vectors.secrets[kid]!, sandbox }), v.header, `${v.name}: header`);
  }
});

t.test('verifying gives every vector its expected result', async (t) => {
  for (const v of vectors.verifying) {
    const r = v.request;
    const result = verifySignature({
      header: v.header,
      method: r.method,
      pathAndQuery: r.pathAndQuery,
      bodySha256: sha256Hex(bodyOf(r)),
      requestId: r.requestId,
      agentId: r.agentId ?? undefined,
      purpose: r.purpose,
      secretFor,
      now: v.now,
    });
    t.match(result, v.expected, v.name);
    if (!v.expected.ok) t.same(Object.keys(result).sort(), ['ok', 'reason'], `${v.name}: failure carries only its reason`);
  }
});

t.test('the header parser is total: any value gives a result, never an exception', async (t) => {
  const anything = fc.anything({ withBigInt: true, withMap: true, withSet: true, withTypedArray: true, withDate: true });
  fc.assert(
    fc.property(anything, (value) => typeof parseSignatureHeader(value).ok === 'boolean'),
    { numRuns: 2000 },
  );
  // Strings near the grammar: fragments of a real header glued with separators.
  const fragment = fc.constantFrom(
    't=',
    'kid=',
    'v1=',
    'sb=1',
    ',',
    '=',
    '1767225600',
    'hsec_qtaoEdr9USu9lu9xrbuaTIkw',
    'a'.repeat(64),
    ' ',
    '\n',
    '0',
  );
  fc.assert(
    fc.property(fc.array(fragment, { maxLength: 12 }), (parts) => {
      const header = parts.join('');
      const parsed = parseSignatureHeader(header);
      // Whatever parses must print back to the very same text.
      return !parsed.ok || formatSignatureHeader(parsed) === header;
    }),
    { numRuns: 5000 },
  );
  t.equal(parseSignatureHeader('x'.repeat(1_000_000)).ok, false, 'a megabyte of junk');
  t.equal(parseSignatureHeader(`t=1,kid=hsec_${'a'.repeat(24)},v1=${'0'.repeat(64)}${' '.repeat(100)}`).ok, false);
});

t.test('format and parse are inverse (property)', async (t) => {
  const header = fc.record({
    timestamp: fc.integer({ min: 0, max: 999_999_999_999 }),
    kid: fc.stringMatching(/^hsec_[0-9A-Za-z]{24}$/),
    v1: fc.stringMatching(/^[0-9a-f]{64}$/),
    sandbox: fc.boolean(),
  });
  fc.assert(
    fc.property(header, (h) => {
      const parsed = parseSignatureHeader(formatSignatureHeader(h));
      return parsed.ok && parsed.timestamp === h.timestamp && parsed.kid === h.kid && parsed.v1 === h.v1 && parsed.sandbox === h.sandbox;
    }),
  );
  t.pass('round-trips');
});

const base = {
  timestamp: 1_767_225_600,
  method: 'GET',
  pathAndQuery: '/x',
  bodySha256: sha256Hex(''),
  requestId: 'hubreq_a',
  agentId: undefined,
};
const kid = Object.keys(vectors.secrets)[0]!;
const secret = vectors.secrets[kid]!;

t.test('a line break in a field cannot move text from one line to the next', async (t) => {
  // Without the check these two would share a canonical string: request id "r\nagt_x" with no agent
  // id, and request id "r" with agent id "agt_x".
  const honest = signatureHeader({ ...base, requestId: 'hubreq_a', agentId: 'agt_x', kid, secret });
  const smuggled = verifySignature({
    ...base,
    header: honest,
    requestId: 'hubreq_a\nagt_x',
    agentId: undefined,
    secretFor,
    now: base.timestamp,
  });
  t.same(smuggled, { ok: false, reason: 'invalid_signature' });
  for (const field of ['method', 'pathAndQuery', 'requestId', 'agentId'] as const) {
    t.throws(() => canonicalString({ ...base, [field]: 'a\r\nb' }), TypeError, `signing refuses a line break in ${field}`);
  }
  t.throws(() => canonicalString({ ...base, purpose: 'access.delete' as SignaturePurpose }), TypeError, 'unknown purpose');
  t.throws(() => canonicalString({ ...base, timestamp: 1.5 }), TypeError, 'fractional timestamp');
});

t.test('the purpose comes from the verifier, and each purpose authorizes only itself', async (t) => {
  const purposes = [undefined, 'access.write', 'access.mint'] as const;
  for (const signedAs of purposes) {
    const header = signatureHeader({ ...base, purpose: signedAs, kid, secret });
    for (const route of purposes) {
      const result = verifySignature({ ...base, header, purpose: route, secretFor, now: base.timestamp });
      t.equal(result.ok, signedAs === route, `signed for ${signedAs ?? 'proxied traffic'}, checked on ${route ?? 'an ordinary route'}`);
    }
  }
});

t.test('tolerance is configurable and checked before the secret is looked up', async (t) => {
  const header = signatureHeader({ ...base, kid, secret });
  let lookups = 0;
  const counting = (k: string) => (lookups++, secretFor(k));
  t.match(verifySignature({ ...base, header, secretFor: counting, now: base.timestamp + 61, toleranceSeconds: 60 }), {
    ok: false,
    reason: 'stale_timestamp',
  });
  t.match(verifySignature({ ...base, header: 'garbage', secretFor: counting, now: base.timestamp }), {
    ok: false,
    reason: 'missing_or_malformed_signature',
  });
  t.equal(lookups, 0);
  t.match(verifySignature({ ...base, header, secretFor: counting, now: base.timestamp + 60, toleranceSeconds: 60 }), {
    ok: true,
    kid,
    sandbox: false,
    timestamp: base.timestamp,
  });
  t.equal(lookups, 1);
  const fresh = signatureHeader({ ...base, timestamp: Math.floor(Date.now() / 1000), kid, secret });
  t.match(verifySignature({ ...base, header: fresh, secretFor }), { ok: true }, 'defaults to the real clock');
  const old = signatureHeader({ ...base, timestamp: 1_000_000_000, kid, secret });
  t.match(verifySignature({ ...base, header: old, secretFor }), { ok: false, reason: 'stale_timestamp' });
});

t.test('an empty secret or a broken clock never verifies', async (t) => {
  const header = signatureHeader({ ...base, kid, secret });
  t.match(verifySignature({ ...base, header, secretFor: () => '', now: base.timestamp }), { ok: false, reason: 'unknown_kid' });
  t.match(verifySignature({ ...base, header, secretFor, now: Number.NaN }), { ok: false, reason: 'stale_timestamp' });
  t.match(verifySignature({ ...base, header, secretFor, now: base.timestamp, toleranceSeconds: Number.NaN }), {
    ok: false,
    reason: 'stale_timestamp',
  });
  t.throws(() => signatureHeader({ ...base, kid, secret: '' }), TypeError);
});

t.test('signing stays cheap enough to run inline on every proxied request', async (t) => {
  const input = {
    ...base,
    method: 'POST',
    pathAndQuery: '/v1/completions?stream=true',
    agentId: 'agt_cNzi3vOdDgbuAREF5N5XTpeK',
    kid,
    secret,
  };
  for (let i = 0; i < 2_000; i++) signatureHeader(input); // warm up
  const rounds = 20_000;
  const started = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) signatureHeader(input);
  const microsEach = Number(process.hrtime.bigint() - started) / 1_000 / rounds;
  t.comment(`signatureHeader: ${microsEach.toFixed(2)} µs each`);
  // Measured at a few µs; the bound is loose because other test files share the CPU.
  t.ok(microsEach < 50, `${microsEach.toFixed(2)} µs < 50 µs`);
});
