import { ECDH, generateKeyPairSync } from 'node:crypto';
import { CompactEncrypt, compactDecrypt, importJWK } from 'jose';
import t from 'tap';
import {
  agreeWith,
  decryptCompactJwe,
  type EcPrivateJwk,
  encryptCompactJwe,
  onP256,
  parseCompactJwe,
  publicPoint,
  recipientOf,
} from '../../../proxy/encryption/compact-jwe.js';
import { createJweCodec, inlineJweCodec } from '../../../proxy/encryption/jwe-codec.js';

// hub's JWE code against the `jose` library, both ways: what an agent's JOSE library encrypts hub
// decrypts, and what hub encrypts the agent's library decrypts. Tampering anywhere fails.

function p256(): EcPrivateJwk {
  const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  return { kty: 'EC', crv: 'P-256', x: jwk.x!, y: jwk.y!, d: jwk.d! };
}

const seller = p256();
const sellerPublic = { kty: 'EC', crv: 'P-256', x: seller.x, y: seller.y };
const text = new TextEncoder().encode('{"q":"weather in Lisbon","pad":"'.concat('x'.repeat(900), '"}'));

async function joseEncrypted(header: Record<string, unknown> = {}): Promise<string> {
  return new CompactEncrypt(text)
    .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A256GCM', kid: 'k1', ...header })
    .encrypt(await importJWK(sellerPublic, 'ECDH-ES'));
}

t.test('jose encrypts, hub decrypts (apu/apv too)', async (t) => {
  for (const header of [{}, { apu: 'YWdlbnQ', apv: 'c2VsbGVy' }, { cty: 'json' }]) {
    const jwe = parseCompactJwe(await joseEncrypted(header));
    t.ok(jwe, 'parses');
    t.same(decryptCompactJwe(jwe!, recipientOf(seller)), Buffer.from(text));
  }
});

t.test('hub encrypts, jose decrypts, with the extra protected parameters', async (t) => {
  const agent = p256();
  const compact = encryptCompactJwe(text, agreeWith(publicPoint(agent)), { cty: 'application/json', seq: 3 });
  const { plaintext, protectedHeader } = await compactDecrypt(compact, await importJWK(agent, 'ECDH-ES'));
  t.same(Buffer.from(plaintext), Buffer.from(text));
  t.match(protectedHeader, { alg: 'ECDH-ES', enc: 'A256GCM', cty: 'application/json', seq: 3, epk: { kty: 'EC', crv: 'P-256' } });
  t.equal(compact.split('.')[1], '', 'direct key agreement: no encrypted key');
  const empty = encryptCompactJwe(new Uint8Array(0), agreeWith(publicPoint(agent)));
  t.equal((await compactDecrypt(empty, await importJWK(agent, 'ECDH-ES'))).plaintext.length, 0, 'an empty plaintext round-trips');
});

t.test('a change to any part fails to decrypt', async (t) => {
  const compact = await joseEncrypted();
  const parts = compact.split('.');
  for (const index of [0, 2, 3, 4]) {
    const altered = [...parts];
    const part = altered[index]!;
    // Flip one character to another base64url character.
    altered[index] = `${part.slice(0, 5)}${part[5] === 'A' ? 'B' : 'A'}${part.slice(6)}`;
    const jwe = parseCompactJwe(altered.join('.'));
    if (!jwe) {
      t.equal(index, 0, 'only a broken header stops at parsing');
      continue;
    }
    t.same(await inlineJweCodec.open(jwe, seller), undefined, `part ${index} altered`);
  }
  t.same(await inlineJweCodec.open(parseCompactJwe(compact)!, p256()), undefined, 'another key');
});

t.test('what is not a Compact JWE', async (t) => {
  const good = await joseEncrypted();
  const cases = [
    '',
    'a.b.c.d',
    `${good}.x`,
    good.replace('.', '..'),
    `!${good}`,
    good.replace(/^[^.]+/, Buffer.from('[1,2]').toString('base64url')),
    good.replace(/^[^.]+/, Buffer.from('not json').toString('base64url')),
    good.replace(/^[^.]+/, Buffer.from(`${'['.repeat(100_000)}${']'.repeat(100_000)}`).toString('base64url')),
    good.replace(/^[^.]+/, Buffer.from('{"alg":"ECDH-ES\u0000"}').toString('base64url')).replace(/\.[^.]+$/, '.'),
  ];
  for (const text of cases) t.equal(parseCompactJwe(text), undefined, JSON.stringify(text.slice(0, 40)));
});

t.test('the pool does what inline does', async (t) => {
  const pool = createJweCodec('pool', 1);
  t.teardown(() => pool.close());
  const jwe = parseCompactJwe(await joseEncrypted())!;
  t.same(await pool.open(jwe, seller), Buffer.from(text));
  t.same(await pool.open(jwe, p256()), undefined);
  const agent = p256();
  const agreement = await pool.agree(publicPoint(agent));
  t.type(agreement.key, Uint8Array, 'an agreement made on a worker comes back whole');
  const sealed = await pool.seal(text, agreement, { cty: 'text/plain' });
  t.same(Buffer.from((await compactDecrypt(sealed, await importJWK(agent, 'ECDH-ES'))).plaintext), Buffer.from(text));
  t.equal(pool.name, 'pool(1)');
  const early = pool.agreeEarly(publicPoint(agent), 5);
  t.type(early, Promise, 'a pool starts every agreement early, however busy');
  t.type((await early)?.key, Uint8Array);
});

t.test('spare: early agreements on a thread, once it is up and while the proxy is otherwise idle', async (t) => {
  const spare = createJweCodec('spare', 1);
  t.teardown(() => spare.close());
  t.equal(spare.name, 'spare(1)');
  const agent = p256();
  const to = publicPoint(agent);
  t.equal(spare.agreeEarly(to, 0), undefined, 'the first asks for the thread, which is not up yet');
  let early: Promise<unknown> | undefined;
  for (let i = 0; i < 500 && !early; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    early = spare.agreeEarly(to, 0);
  }
  const agreement = (await early) as Awaited<ReturnType<typeof spare.agree>>;
  t.type(agreement?.key, Uint8Array, 'made on the thread');
  const sealed = await spare.seal(text, agreement, {});
  t.same(Buffer.from((await compactDecrypt(sealed, await importJWK(agent, 'ECDH-ES'))).plaintext), Buffer.from(text));
  t.equal(spare.agreeEarly(to, 1), undefined, 'another request in progress: the loop keeps it');
  t.equal(inlineJweCodec.agreeEarly(to, 0), undefined, 'inline never agrees early');
  t.equal(createJweCodec('inline', 4), inlineJweCodec);
});

t.test('inline, an agreement runs after the current turn of the loop', async (t) => {
  const order: string[] = [];
  const agreed = inlineJweCodec.agree(publicPoint(p256())).then(() => order.push('agreed'));
  order.push('turn');
  await new Promise((resolve) => setImmediate(resolve));
  await agreed;
  t.same(order, ['turn', 'agreed']);
  await t.rejects(inlineJweCodec.agree(Buffer.from([4, 1, 2])), 'a point off the curve is refused');
});

t.test('a point is on P-256 exactly when OpenSSL decodes it', async (t) => {
  const P = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
  const B = 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn;
  const modPow = (base: bigint, exp: bigint): bigint => {
    let result = 1n;
    for (let b = base % P, e = exp; e > 0n; e >>= 1n, b = (b * b) % P) if (e & 1n) result = (result * b) % P;
    return result;
  };
  const bytes32 = (n: bigint) => Buffer.from(n.toString(16).padStart(64, '0'), 'hex');
  const point = (x: bigint, y: bigint) => Buffer.concat([Buffer.from([4]), bytes32(x), bytes32(y)]);
  const openssl = (p: Buffer) => {
    try {
      ECDH.convertKey(p, 'prime256v1');
      return true;
    } catch {
      return false;
    }
  };

  const cases: [string, Buffer][] = [];
  for (let i = 0; i < 50; i++) {
    const key = p256();
    const valid = publicPoint(key);
    cases.push(['a generated key', valid]);
    const swapped = Buffer.concat([valid.subarray(0, 1), valid.subarray(33), valid.subarray(1, 33)]);
    cases.push(['x and y swapped', swapped]);
    const nudged = Buffer.from(valid);
    nudged[64]! ^= 1;
    cases.push(['y off by one bit', nudged]);
  }
  // A small x whose right-hand side is a square (P ≡ 3 mod 4: the root is rhs^((P+1)/4)), then the
  // same point with x written unreduced as x + P, which still fits 32 bytes.
  let x = 1n;
  let y = 0n;
  for (; ; x++) {
    const rhs = (((x * x * x - 3n * x + B) % P) + P) % P;
    y = modPow(rhs, (P + 1n) / 4n);
    if ((y * y) % P === rhs) break;
  }
  cases.push(['a small x', point(x, y)], ['x + P', point(x + P, y)], ['y + P', point(x, y + P)]);
  cases.push(['the wrong prefix', Buffer.concat([Buffer.from([2]), point(x, y).subarray(1)])]);
  cases.push(['too short', point(x, y).subarray(0, 64)]);

  for (const [name, candidate] of cases) t.equal(onP256(candidate), openssl(candidate), name);
  t.ok(onP256(point(x, y)), 'the small-x point is on the curve');
  t.notOk(onP256(point(x + P, y)), 'an unreduced coordinate is refused');
  t.throws(() => publicPoint({ x: bytes32(x + P).toString('base64url'), y: bytes32(y).toString('base64url') }));
});
