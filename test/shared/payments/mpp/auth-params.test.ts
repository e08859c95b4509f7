import fc from 'fast-check';
import t from 'tap';
import { formatAuthParam, MAX_AUTH_HEADER_LENGTH, parseAuthChallenges } from '../../../../shared/payments/mpp/auth-params.js';

t.test('a list of challenges, with params, token68 and bare schemes', async (t) => {
  const parsed = parseAuthChallenges(
    'Bearer realm="api", error="invalid_token", Basic dXNlcjpwYXNz==, Payment id="a", REALM = b, Negotiate',
  );
  t.same(
    parsed?.map((c) => ({ scheme: c.scheme, params: { ...c.params }, token68: c.token68 })),
    [
      { scheme: 'Bearer', params: { realm: 'api', error: 'invalid_token' }, token68: undefined },
      { scheme: 'Basic', params: {}, token68: 'dXNlcjpwYXNz==' },
      { scheme: 'Payment', params: { id: 'a', realm: 'b' }, token68: undefined },
      { scheme: 'Negotiate', params: {}, token68: undefined },
    ],
  );
});

t.test('a scheme name inside a quoted value or used as a parameter name is not a challenge', async (t) => {
  const parsed = parseAuthChallenges('Payment description="pay, Payment id=\\"x\\"", payment="p", id="1"');
  t.equal(parsed?.length, 1);
  t.same({ ...parsed?.[0]?.params }, { description: 'pay, Payment id="x"', payment: 'p', id: '1' });
});

t.test('refuses what breaks the grammar', async (t) => {
  for (const bad of [
    'Payment id="unterminated',
    'Payment id="a", id="b"', // a repeated parameter could smuggle a second value past a check
    'Payment id="a" junk',
    'Payment id=, realm="x"', // `id=` alone would be a token68
    'Payment id="line\nbreak"',
    '="x"',
    'Pay"ment id="a"',
    'Payment id="a"x',
  ]) {
    t.equal(parseAuthChallenges(bad), undefined, JSON.stringify(bad));
  }
  t.equal(parseAuthChallenges(`Payment id="${'a'.repeat(MAX_AUTH_HEADER_LENGTH)}"`), undefined, 'too long');
  t.equal(parseAuthChallenges(42), undefined);
  t.same(parseAuthChallenges(''), []);
});

t.test('any value survives formatting and parsing, and the header stays printable ASCII', async (_t) => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 80 }), fc.string({ unit: 'grapheme', maxLength: 40 }), (a, b) => {
      const header = `Payment ${formatAuthParam('a', a)}, ${formatAuthParam('b', b)}`;
      const parsed = parseAuthChallenges(header);
      return /^[\x20-\x7e]*$/.test(header) && parsed?.[0]?.params.a === a && parsed[0].params.b === b;
    }),
    { numRuns: 500 },
  );
});

t.test('fuzz: never throws, whatever the input', async () => {
  const alphabet = fc.constantFrom('Payment', 'Bearer', ' ', ',', '=', '"', '\\', 'u', '00e9', 'id', 'a', '\t', '\n', 'é');
  fc.assert(
    fc.property(fc.array(alphabet, { maxLength: 40 }), (parts) => void parseAuthChallenges(parts.join(''))),
    { numRuns: 2000 },
  );
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (s) => void parseAuthChallenges(s)),
    { numRuns: 2000 },
  );
  fc.assert(
    fc.property(fc.anything(), (v) => void parseAuthChallenges(v)),
    { numRuns: 300 },
  );
});
