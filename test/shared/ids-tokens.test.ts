import t from 'tap';
import { idPrefixes, isId, newId, randomBase62 } from '../../shared/ids.js';
import { hashToken, newToken, safeEqual, tokenKind } from '../../shared/tokens.js';

t.test('ids carry the spec prefixes and 24 base62 characters', async (t) => {
  const spec = {
    seller: 'sel_',
    service: 'svc_',
    meter: 'mtr_',
    plan: 'pln_',
    planMeterPrice: 'pmp_',
    apiKey: 'ak_',
    signingSecret: 'hsec_',
    agent: 'agt_',
    buyer: 'byr_',
    request: 'hubreq_',
    usageEvent: 'use_',
    access: 'hubacc_',
    paymentAttempt: 'apay_',
  } as const;
  for (const [kind, prefix] of Object.entries(spec)) {
    const id = newId(kind as keyof typeof spec);
    t.ok(id.startsWith(prefix), `${kind} → ${prefix}`);
    t.match(id.slice(prefix.length), /^[0-9A-Za-z]{24}$/);
    t.ok(isId(kind as keyof typeof spec, id));
  }
  t.equal(new Set(Object.values(idPrefixes)).size, Object.values(idPrefixes).length, 'prefixes are distinct');
});

t.test('isId rejects garbage and other kinds', async (t) => {
  t.notOk(isId('seller', newId('service')));
  t.notOk(isId('seller', 'sel_short'));
  t.notOk(isId('seller', `sel_${'a'.repeat(23)}!`));
  t.notOk(isId('seller', 42));
  t.notOk(isId('request', `hubreq_${'a'.repeat(25)}`));
});

t.test('randomness is unbiased enough to use every character', async (t) => {
  const seen = new Set(randomBase62(20_000));
  t.equal(seen.size, 62);
  const ids = new Set(Array.from({ length: 10_000 }, () => newId('request')));
  t.equal(ids.size, 10_000, 'no collisions');
});

t.test('tokens: prefixes, kinds, hashing, constant-time compare', async (t) => {
  const key = newToken('apiKey');
  t.match(key, /^hub_[0-9A-Za-z]{40}$/);
  t.equal(tokenKind(key), 'apiKey');
  t.equal(tokenKind(newToken('session')), 'session');
  t.equal(tokenKind(newToken('agent')), 'agent');
  t.equal(tokenKind('nope'), undefined);
  t.match(hashToken(key), /^[0-9a-f]{64}$/);
  t.not(hashToken(key), hashToken(newToken('apiKey')));
  t.ok(safeEqual('abc', 'abc'));
  t.notOk(safeEqual('abc', 'abd'));
  t.notOk(safeEqual('abc', 'abcd'));
});
