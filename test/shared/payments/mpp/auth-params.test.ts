import fc from 'fast-check';
import t from 'tap';
import { formatAuthParam, isHeaderText, MAX_AUTH_HEADER_LENGTH, parseAuthChallenges } from '../../../../shared/payments/mpp/auth-params.js';

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

t.test('any value a header can carry survives formatting and parsing, as a legal field value', async (_t) => {
  const carriable = (unit: 'binary' | 'grapheme', maxLength: number) =>
    fc.string({ unit, maxLength }).filter((s) => isHeaderText(s) && !/[\uD800-\uDFFF]/u.test(s)); // no lone surrogates
  fc.assert(
    fc.property(carriable('binary', 80), carriable('grapheme', 40), (a, b) => {
      const header = `Payment ${formatAuthParam('a', a)}, ${formatAuthParam('b', b)}`;
      const parsed = parseAuthChallenges(header);
      // A field value is bytes: tab, printable ASCII and obs-text, one character per byte.
      return /^[\t\x20-\x7e\x80-\xff]*$/.test(header) && parsed?.[0]?.params.a === a && parsed[0].params.b === b;
    }),
    { numRuns: 500 },
  );
});

t.test('quoted-strings are written and read as RFC 9110 has them', async (t) => {
  // What hub writes, byte for byte.
  t.equal(formatAuthParam('d', 'a\tb'), 'd="a\tb"', 'a tab is qdtext: written as itself');
  t.equal(formatAuthParam('d', 'say "hi" \\ bye'), 'd="say \\"hi\\" \\\\ bye"', 'quote and backslash are quoted-pairs');
  t.equal(formatAuthParam('d', 'café'), 'd="caf\xe9"', 'é fits in a byte: written as itself, obs-text in ISO-8859-1');
  t.equal(Buffer.from(formatAuthParam('d', '€ 🙂 é'), 'latin1').toString('utf8'), 'd="€ 🙂 é"', 'wider text goes out as UTF-8 bytes');
  t.equal(
    Buffer.from(formatAuthParam('d', 'Ã©'), 'latin1').toString('utf8'),
    'd="Ã©"',
    'ISO-8859-1 text that reads as UTF-8 goes as UTF-8',
  );
  for (const bad of ['line\nbreak', 'nul\u0000', 'bell\u0007', 'del\u007f']) {
    t.notOk(isHeaderText(bad), JSON.stringify(bad));
    t.throws(() => formatAuthParam('d', bad), /control character/, JSON.stringify(bad));
  }

  // What an RFC reader takes from the wire.
  const read = (value: string) => parseAuthChallenges(`Payment d=${value}`)?.[0]?.params.d;
  t.equal(read('"a\tb"'), 'a\tb', 'a literal tab');
  t.equal(read('"\\u00e9"'), 'u00e9', 'a quoted-pair is the character after the backslash: \\u00e9 is not é');
  t.equal(read('"\\u0009"'), 'u0009');
  t.equal(read('"\\a\\\\\\""'), 'a\\"', 'quoted-pairs of ordinary and special characters');
  t.equal(read('"\\\t"'), '\t', 'a quoted-pair may hold a tab');
  t.equal(read(`"caf${Buffer.from('é').toString('latin1')}"`), 'café', 'UTF-8 obs-text reads as its character');
  t.equal(read('"caf\xe9"'), 'café', 'obs-text that is not UTF-8 reads as ISO-8859-1');
  t.equal(read('"café"'), 'café', 'a value already decoded is kept');
  t.equal(read('"a\\\nb"'), undefined, 'a quoted-pair cannot carry a line break');
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
