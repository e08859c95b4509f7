import fc from 'fast-check';
import { Credential as MppxCredential } from 'mppx';
import t from 'tap';
import { base64urlEncode } from '../../../../shared/payments/mpp/encoding.js';
import {
  type Credential,
  decodeCredential,
  parseCredential,
  readCredential,
  serializeCredential,
} from '../../../../shared/payments/mpp/index.js';
import { newToken } from '../../../../shared/tokens.js';
import { issueChallenge, mppxCredential, newPayer } from '../../../helpers/mpp-fixtures.js';

const { challenge } = issueChallenge();
const payer = newPayer();
const header = await mppxCredential(challenge, payer.key);
const token = header.slice('Payment '.length);

t.test('what the mppx client sends', async (t) => {
  t.match(header, /^Payment [A-Za-z0-9_-]+$/, 'Payment scheme, unpadded base64url');
  const parsed = parseCredential(header);
  t.ok(parsed.ok);
  if (!parsed.ok) return;
  t.same(parsed.value.challenge, challenge, 'the challenge comes back field for field');
  t.equal(parsed.value.source, `did:pkh:eip155:31337:${payer.address}`);
  t.match(parsed.value.payload, { type: 'authorization', from: payer.address, validAfter: '0' });
});

t.test('mppx reads what we serialize, and we read what mppx serializes', async (t) => {
  const credential: Credential = { challenge, payload: { anything: ['goes', 1] }, source: 'did:example:1' };
  const ours = serializeCredential(credential);
  t.same(JSON.parse(JSON.stringify(MppxCredential.deserialize(ours))), JSON.parse(JSON.stringify(credential)));
  const theirs = MppxCredential.serialize(credential as never);
  t.same(parseCredential(theirs), { ok: true, value: credential });
});

t.test('the three places a credential can come from', async (t) => {
  t.match(readCredential({ authorization: header }), { status: 'present', carrier: 'authorization-payment' });
  t.match(readCredential({ authorization: `payment   ${token}` }), { status: 'present' }, 'scheme is case-insensitive');
  t.match(readCredential({ authorization: `Bearer ${token}` }), { status: 'present', carrier: 'authorization-bearer' });
  t.match(readCredential({ 'payment-authorization': header }), { status: 'present', carrier: 'payment-authorization' });
  t.match(readCredential({ 'payment-authorization': token }), { status: 'present', carrier: 'payment-authorization' }, 'bare');
  t.match(readCredential({ authorization: `Basic dXNlcjpwYXNz, ${header}` }), { status: 'present' }, 'from a list of schemes');
  // The same credential twice is still one credential.
  t.match(readCredential({ authorization: header, 'payment-authorization': token }), {
    status: 'present',
    carrier: 'payment-authorization',
  });
  const found = readCredential({ authorization: `Bearer ${token}` });
  if (found.status === 'present') t.same(found.credential.challenge, challenge);
});

t.test('an agent token in Authorization is not a credential, so a credential elsewhere still counts', async (t) => {
  const agentToken = newToken('agent');
  t.same(readCredential({ authorization: `Bearer ${agentToken}` }), { status: 'absent' });
  t.same(readCredential({ authorization: 'Bearer eyJmb28iOjF9' }), { status: 'absent' }, 'JSON, but no challenge');
  t.match(readCredential({ authorization: `Bearer ${agentToken}`, 'payment-authorization': header }), {
    status: 'present',
    carrier: 'payment-authorization',
  });
  t.same(readCredential({}), { status: 'absent' });
  t.same(readCredential({ authorization: '' }), { status: 'absent' });
});

t.test('a bearer credential is found by its JSON, however its text opens (whitespace, a byte-order mark)', async (t) => {
  const json = Buffer.from(token, 'base64url').toString('utf8');
  for (const opening of ['', ' ', '\t', '\n', '\r', '\uFEFF']) {
    t.match(
      readCredential({ authorization: `Bearer ${base64urlEncode(`${opening}${json}`)}` }),
      { status: 'present', carrier: 'authorization-bearer' },
      JSON.stringify(opening),
    );
  }
});

t.test('ambiguous or broken credentials are refused with a reason', async (t) => {
  const other = await mppxCredential(issueChallenge().challenge, payer.key);
  t.match(readCredential({ authorization: header, 'payment-authorization': other }), { status: 'invalid', reason: 'multiple_credentials' });
  t.match(readCredential({ authorization: `${header}, ${other}` }), { status: 'invalid', reason: 'multiple_credentials' });
  t.match(readCredential({ 'payment-authorization': [header, other] }), { status: 'invalid', reason: 'multiple_credentials' });
  t.match(readCredential({ authorization: 'Payment not*base64' }), {
    status: 'invalid',
    carrier: 'authorization-payment',
    reason: 'invalid_encoding',
  });
  t.match(readCredential({ authorization: `Payment ${base64urlEncode('[1]')}` }), { status: 'invalid', reason: 'invalid_shape' });
  const noPayload = base64urlEncode(JSON.stringify({ challenge: {} }));
  t.match(readCredential({ authorization: `Payment ${noPayload}` }), { status: 'invalid', reason: 'invalid_shape' });
  const badChallenge = base64urlEncode(JSON.stringify({ challenge: { id: 'x' }, payload: {} }));
  t.match(readCredential({ authorization: `Bearer ${badChallenge}` }), {
    status: 'invalid',
    carrier: 'authorization-bearer',
    reason: 'malformed_challenge',
  });
  t.match(decodeCredential('A'.repeat(40_000)), { ok: false, reason: 'credential_too_large' });
  t.match(parseCredential(`Bearer ${token}`), { ok: false, reason: 'invalid_encoding' }, 'parseCredential wants the Payment scheme');
});

t.test('fuzz: reading headers never throws', async () => {
  const anyHeader = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 300 }),
    fc.array(fc.string(), { maxLength: 3 }),
    fc.constant(undefined),
  );
  fc.assert(
    fc.property(anyHeader, anyHeader, (a, p) => void readCredential({ authorization: a, 'payment-authorization': p })),
    { numRuns: 2000 },
  );
  // Valid base64url of arbitrary JSON gets past the first gate and exercises the shape checks.
  const json = fc.jsonValue({ maxDepth: 5 }).map((v) => base64urlEncode(JSON.stringify(v)));
  const wrapped = fc.record({
    challenge: fc.dictionary(fc.constantFrom('id', 'realm', 'method', 'intent', 'request', 'expires', 'opaque'), fc.jsonValue()),
    payload: fc.jsonValue(),
  });
  fc.assert(
    fc.property(json, (v) => void decodeCredential(v)),
    { numRuns: 1000 },
  );
  fc.assert(
    fc.property(wrapped, (w) => void decodeCredential(base64urlEncode(JSON.stringify(w)))),
    { numRuns: 1000 },
  );
  // Mutations of a real credential.
  const mutated = fc
    .tuple(fc.nat({ max: token.length }), fc.nat({ max: 6 }), fc.string({ maxLength: 6 }))
    .map(([at, cut, insert]) => `Payment ${token.slice(0, at)}${insert}${token.slice(at + cut)}`);
  fc.assert(
    fc.property(mutated, (h) => void readCredential({ authorization: h })),
    { numRuns: 1000 },
  );
  fc.assert(
    fc.property(fc.anything(), (v) => {
      decodeCredential(v);
      parseCredential(v);
    }),
    { numRuns: 300 },
  );
});
