import fc from 'fast-check';
import { Challenge as MppxChallenge } from 'mppx';
import t from 'tap';
import {
  type Challenge,
  expiresAfter,
  isChallengeExpired,
  parseChallenge,
  parseChallenges,
  serializeChallenge,
  signChallenge,
  verifyChallengeId,
} from '../../../../shared/payments/mpp/index.js';
import { issueChallenge, REALM, SECRET } from '../../../helpers/mpp-fixtures.js';

const plain = (c: object) => JSON.parse(JSON.stringify(c)) as Record<string, unknown>;

t.test('a challenge survives serializing and parsing, and its id verifies', async (t) => {
  const { challenge } = issueChallenge({ description: 'One call to /search — $0.01' });
  const header = serializeChallenge(challenge);
  t.match(
    header,
    /^Payment id="[A-Za-z0-9_-]{43}", realm="acme\.pay\.localhost", method="evm", intent="charge", request="[A-Za-z0-9_-]+", /,
  );
  t.match(header, /digest="sha-256=:[A-Za-z0-9+/]+=*:"/);
  t.ok(/^[\x20-\x7e\x80-\xff]*$/.test(header), 'the non-ASCII description goes out as bytes a header can carry');
  const parsed = parseChallenge(header);
  t.ok(parsed.ok);
  if (!parsed.ok) return;
  t.same(parsed.value, challenge);
  t.ok(verifyChallengeId(parsed.value, SECRET));
});

t.test('mppx reads our challenges and accepts our ids', async (t) => {
  const { challenge } = issueChallenge({ description: 'naïve' });
  const theirs = MppxChallenge.deserialize(serializeChallenge(challenge));
  t.same(plain(theirs), plain(challenge));
  t.ok(MppxChallenge.verify(theirs, { secretKey: SECRET }), 'an mppx server with our secret would accept it');
});

t.test('our ids equal mppx ids for any fields, so either side verifies the other', async (_t) => {
  const fields = fc.record(
    {
      realm: fc.stringMatching(/^[a-z0-9.-]{1,30}$/),
      intent: fc.constantFrom('charge', 'session'),
      request: fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string(), fc.integer(), fc.boolean())),
      expires: fc.date({ min: new Date('2020-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString()),
      digest: fc.base64String({ minLength: 4, maxLength: 44 }).map((b) => `sha-256=:${b}:`),
      opaque: fc.base64String({ minLength: 4, maxLength: 40 }).map((b) => b.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')),
      header: fc.constantFrom('Payment-Authorization', 'Authorization', 'X-Pay'),
      description: fc.string({ maxLength: 20 }),
    },
    { requiredKeys: ['realm', 'intent', 'request'] },
  );
  fc.assert(
    fc.property(fields, fc.string({ minLength: 1, maxLength: 20 }), (f, secret) => {
      // mppx drops an `Authorization` header param from the challenge (it is the default); so do we.
      const input = { ...f, method: 'evm', ...(f.header === 'Authorization' ? { header: undefined } : {}) };
      const ours = signChallenge(input, secret);
      const theirs = MppxChallenge.from({ ...input, secretKey: secret } as never);
      if (ours.id !== theirs.id) return false;
      const back = parseChallenge(MppxChallenge.serialize(theirs));
      return (
        back.ok &&
        verifyChallengeId(back.value, secret) &&
        MppxChallenge.verify(MppxChallenge.deserialize(serializeChallenge(ours)), { secretKey: secret })
      );
    }),
    { numRuns: 300 },
  );
});

t.test('changing any bound field, or the secret, breaks the id', async (t) => {
  const { challenge } = issueChallenge();
  const changes: Partial<Challenge>[] = [
    { realm: 'other.pay.localhost' },
    { method: 'tempo' },
    { intent: 'session' },
    { request: { ...challenge.request, amount: '1' } },
    { expires: expiresAfter(3600) },
    { digest: 'sha-256=:AAAA:' },
    { opaque: 'eyJ9' },
    { header: 'Payment-Authorization' },
    { id: challenge.id.slice(0, -1) },
    { id: `${challenge.id}A` },
  ];
  for (const change of changes) t.notOk(verifyChallengeId({ ...challenge, ...change }, SECRET), Object.keys(change).join());
  t.notOk(verifyChallengeId(challenge, 'another-secret'));
  t.notOk(verifyChallengeId(challenge, ''), 'an empty secret verifies nothing');
  // description is not bound (as in mppx): it is display text and carries no terms.
  t.ok(verifyChallengeId({ ...challenge, description: 'changed' }, SECRET));
});

t.test('expiry', async (t) => {
  const now = Date.parse('2030-01-01T00:00:00Z');
  t.equal(expiresAfter(300, now + 999), '2030-01-01T00:05:00Z', 'whole seconds, as clients sign validBefore from it');
  t.notOk(isChallengeExpired({ expires: '2030-01-01T00:05:00Z' }, now));
  t.ok(isChallengeExpired({ expires: '2030-01-01T00:05:00Z' }, Date.parse('2030-01-01T00:05:00Z')));
  t.ok(isChallengeExpired({}, now), 'a challenge without expires never counts as live');
});

t.test('hub never issues a challenge it would refuse', async (t) => {
  const base = issueChallenge().challenge;
  const { id: _id, ...fields } = base;
  t.throws(() => signChallenge({ ...fields, realm: 'a|b' }, SECRET), /realm/, '"|" would shift HMAC slots');
  t.throws(() => signChallenge({ ...fields, method: 'EVM' }, SECRET), /method/);
  t.throws(() => signChallenge({ ...fields, opaque: 'not base64url!' }, SECRET), /opaque/);
  t.throws(() => signChallenge({ ...fields, expires: 'tomorrow' }, SECRET), /expires/);
  t.throws(() => signChallenge({ ...fields, request: { n: 1n } }, SECRET), /JSON/);
  t.throws(() => signChallenge(fields, ''), /secret/);
  t.throws(() => signChallenge({ ...fields, description: 'two\nlines' }, SECRET), /description/, 'a header cannot carry it');
  t.equal(signChallenge({ ...fields, description: 'Météo\tà la minute' }, SECRET).description, 'Météo\tà la minute');
});

t.test('several challenges in one header; other schemes are skipped', async (t) => {
  const a = issueChallenge().challenge;
  const b = issueChallenge({ priceMicros: 20_000n }).challenge;
  const all = parseChallenges(`Bearer realm="x", ${serializeChallenge(a)}, Basic abc==, ${serializeChallenge(b)}`);
  t.ok(all.ok);
  if (all.ok) t.same(all.value, [a, b]);
  t.match(parseChallenges('Bearer realm="x"'), { ok: false, reason: 'no_payment_challenge' });
  t.match(parseChallenges('Payment abc=='), { ok: false, reason: 'malformed_challenge' });

  const incomplete = `Payment id="x", realm="${REALM}", method="evm", intent="charge"`;
  const skipping = parseChallenges(`${incomplete}, Payment abc==, ${serializeChallenge(b)}`);
  t.ok(skipping.ok, 'an incomplete offer and a token68 one are skipped, not the whole header');
  if (skipping.ok) t.same(skipping.value, [b]);
  t.match(
    parseChallenges(`${incomplete}, Payment def==`),
    { ok: false, reason: 'malformed_challenge', detail: /request/ },
    'with no usable offer, the first refusal says why',
  );
  t.match(
    parseChallenge(`Payment id="x", realm="${REALM}", method="evm", intent="charge", request="W10"`),
    { ok: false, reason: 'malformed_challenge' },
    'request must be an object',
  );
});

t.test('fuzz: parsing never throws', async () => {
  const header = serializeChallenge(issueChallenge().challenge);
  const mutated = fc
    .tuple(fc.nat({ max: header.length }), fc.nat({ max: 8 }), fc.string({ unit: 'binary', maxLength: 8 }))
    .map(([at, cut, insert]) => header.slice(0, at) + insert + header.slice(at + cut));
  fc.assert(
    fc.property(mutated, (h) => void parseChallenges(h)),
    { numRuns: 2000 },
  );
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 400 }), (h) => void parseChallenge(h)),
    { numRuns: 2000 },
  );
  fc.assert(
    fc.property(fc.anything(), (h) => void parseChallenge(h)),
    { numRuns: 300 },
  );
});
