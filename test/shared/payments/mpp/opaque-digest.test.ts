import { createHash } from 'node:crypto';
import { Challenge as MppxChallenge } from 'mppx';
import t from 'tap';
import { newId } from '../../../../shared/ids.js';
import { base64urlEncode } from '../../../../shared/payments/mpp/encoding.js';
import { bodyDigest, digestMatches, paymentIdOf, paymentIdOpaque, serializeChallenge } from '../../../../shared/payments/mpp/index.js';
import { issueChallenge } from '../../../helpers/mpp-fixtures.js';

t.test('the payment id rides in opaque as mppx meta', async (t) => {
  const paymentId = newId('paymentAttempt');
  const opaque = paymentIdOpaque(paymentId);
  t.equal(paymentIdOf({ opaque }), paymentId);
  // mppx would have written the same opaque for `meta: { paymentId }`.
  const theirs = MppxChallenge.from({ id: 'x', realm: 'r', method: 'evm', intent: 'charge', request: {}, meta: { paymentId } });
  t.equal(theirs.opaque, opaque);
  // And what an mppx client echoes is what it was given.
  const { challenge } = issueChallenge();
  t.equal(MppxChallenge.deserialize(serializeChallenge(challenge)).opaque, challenge.opaque);

  t.throws(() => paymentIdOpaque('pay_123'), TypeError);
  t.equal(paymentIdOf({}), undefined);
  t.equal(paymentIdOf({ opaque: base64urlEncode('{"paymentId":"apay_short"}') }), undefined);
  t.equal(paymentIdOf({ opaque: base64urlEncode('{"other":1}') }), undefined);
  t.equal(paymentIdOf({ opaque: base64urlEncode('["apay"]') }), undefined);
  t.equal(paymentIdOf({ opaque: '***' }), undefined);
});

t.test('the body digest is an RFC 9530 sha-256 member', async (t) => {
  const body = Buffer.from('{"q":"é"}');
  const expected = `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
  t.equal(bodyDigest(body), expected);
  t.equal(bodyDigest(body.toString('utf8')), expected, 'a string is hashed as UTF-8');
  t.equal(bodyDigest(''), 'sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:');
  t.ok(digestMatches(expected, body));
  t.notOk(digestMatches(expected, Buffer.from('{"q":"e"}')));
  t.notOk(digestMatches(undefined, body));
  t.notOk(digestMatches('sha-256=:x:', body));
});
