import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import { createReplyKey, decryptEventStream, decryptReply, encryptRequest, type Jwks } from '../../../sdk/encryption.js';
import { testProviders } from '../../helpers/database.js';
import { addEncryptionKey, craftJwe, jwksListing, retireEncryptionKey } from '../../helpers/encryption.js';
import { startTestHub, type TestHub } from '../../helpers/hub.js';
import { managementClient } from '../../helpers/management.js';
import { sellerBehind, startTestUpstream } from '../../helpers/upstream.js';

// End-to-end encrypted requests through a real proxy and control-plane, with an agent encrypting
// on the `jose` library (the SDK's helpers) and a seller API that verifies hub's signature over
// the plaintext it receives.

const JOSE = { 'content-type': 'application/jose' };

/** `jwe` with its ephemeral key's members replaced (the tag no longer matches, which is checked later). */
function withEpk(jwe: string, members: Record<string, unknown>): string {
  const [h, ...rest] = jwe.split('.');
  const header = JSON.parse(Buffer.from(h!, 'base64url').toString());
  header.epk = { ...header.epk, ...members };
  return [Buffer.from(JSON.stringify(header)).toString('base64url'), ...rest].join('.');
}

function encryptingWorld(hub: TestHub, sellerId: string) {
  const api = managementClient(hub.cp.url);
  const jwks = async (): Promise<Jwks> => (await hub.pay('acme', '/.well-known/jwks.json')).json() as Promise<Jwks>;
  return {
    api,
    jwks,
    addKey: () => addEncryptionKey(api, hub.apiKey, sellerId),
    retireKey: (kid: string) => retireEncryptionKey(api, hub.apiKey, sellerId, kid),
    published: (kids: string[]) => jwksListing(jwks, kids),
    post: (path: string, body: string, headers: Record<string, string> = JOSE) => hub.pay('acme', path, { method: 'POST', headers, body }),
  };
}

for (const provider of testProviders()) {
  t.test(`encrypted requests on ${provider}`, async (t) => {
    const hub = await startTestHub(t, provider);
    const upstream = await startTestUpstream(t);
    const seller = await sellerBehind(hub, upstream);
    const world = encryptingWorld(hub, seller.id);
    const replyKey = await createReplyKey();

    await t.test('a seller without keys publishes an empty JWKS and refuses encrypted bodies', async (t) => {
      const res = await hub.pay('acme', '/.well-known/jwks.json');
      t.equal(res.status, 200);
      t.equal(res.headers.get('cache-control'), 'public, max-age=60');
      t.same(await res.json(), { keys: [] });
      const agent = await hub.agent();
      const manifest = (await (
        await hub.pay('acme', '/manifest.json', { headers: { authorization: `Bearer ${agent.token}` } })
      ).json()) as { encryption: unknown };
      t.equal(manifest.encryption, null);
      const before = upstream.seen.length;
      const refused = await world.post('/echo', 'not even a JWE');
      t.match(
        [refused.status, await refused.json()],
        [400, { error: 'encryption_not_configured', reason: /publishes no encryption keys/ }],
      );
      t.equal(upstream.seen.length, before, 'nothing reached the seller');
    });

    const kid = await world.addKey();
    const jwks = await world.published([kid]);
    const key = jwks.keys[0]!;

    await t.test('the JWKS and the manifest publish the public key', async (t) => {
      t.same(Object.keys(key).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
      t.match(key, { kty: 'EC', crv: 'P-256', kid, use: 'enc', alg: 'ECDH-ES' });
      const agent = await hub.agent();
      const manifest = (await (
        await hub.pay('acme', '/manifest.json', { headers: { authorization: `Bearer ${agent.token}` } })
      ).json()) as { encryption: unknown };
      t.same(manifest.encryption, {
        alg: 'ECDH-ES',
        enc: 'A256GCM',
        replyJwkParameter: 'reply_jwk',
        jwksPath: '/.well-known/jwks.json',
        jwks: { keys: [key] },
      });
    });

    await t.test('an encrypted call: the seller gets the plaintext signed, the agent an encrypted reply', async (t) => {
      const body = await encryptRequest(jwks, '{"city":"Lisbon"}', { replyKey, contentType: 'application/json' });
      const res = await world.post('/echo/forecast?days=2', body, {
        'content-type': 'application/jose; charset=utf-8',
        'accept-encoding': 'gzip',
        'x-agent-note': 'kept',
        'content-digest': 'sha-256=:AAAA:',
        digest: 'SHA-256=AAAA',
        'content-md5': 'AAAA',
      });
      t.equal(res.status, 200);
      t.equal(res.headers.get('content-type'), 'application/jose');
      t.equal(res.headers.get('x-upstream'), 'yes', 'the seller’s own headers stay outside');
      const text = await res.text();
      t.equal(Number(res.headers.get('content-length')), text.length);
      t.notMatch(text, /Lisbon/, 'nothing readable on the way');
      const reply = await decryptReply(text, replyKey);
      t.equal(reply.contentType, 'application/json');
      const echoed = JSON.parse(new TextDecoder().decode(reply.plaintext));
      t.equal(echoed.body, '{"city":"Lisbon"}');
      t.equal(echoed.url, '/echo/forecast?days=2');

      const seen = upstream.seen.at(-1)!;
      t.equal(seen.body, '{"city":"Lisbon"}', 'the seller received the plaintext (its SDK verified the signature over it)');
      t.equal(seen.headers['content-type'], 'application/json', 'with the plaintext’s own type, from cty');
      t.equal(seen.headers['content-length'], String('{"city":"Lisbon"}'.length));
      t.notOk(seen.headers['accept-encoding'], 'the reply is encrypted whole, never compressed inside');
      for (const field of ['content-digest', 'digest', 'content-md5'])
        t.notOk(seen.headers[field], `${field} described the JWE, not the plaintext: not forwarded`);
      t.equal(seen.headers['x-agent-note'], 'kept');
      t.match(seen.headers['hub-request-id'], /^hubreq_/);
    });

    await t.test('a body without cty reaches the seller as application/octet-stream; cty "json" means application/json', async (t) => {
      await world.post('/echo', await encryptRequest(jwks, 'raw', { replyKey }));
      t.equal(upstream.seen.at(-1)!.headers['content-type'], 'application/octet-stream');
      await world.post('/echo', await craftJwe(key, { kid, cty: 'json', reply_jwk: replyKey.publicJwk }));
      t.equal(upstream.seen.at(-1)!.headers['content-type'], 'application/json');
      await world.post('/echo', await craftJwe(key, { kid, cty: 'text/plain; charset="utf-8"', reply_jwk: replyKey.publicJwk }));
      t.equal(upstream.seen.at(-1)!.headers['content-type'], 'text/plain; charset="utf-8"', 'a quoted parameter');
      const before = upstream.seen.length;
      for (const [cty, label] of [
        ['text/plain\r\nx-injected: 1', 'a header injected'],
        ['text/plain\n;a=b', 'a line feed before ";" (spaces and tabs only)'],
        ['text/plain;a="\u0000"', 'a NUL in a quoted value (visible ASCII only)'],
        ['text/plain;a="\u2028"', 'a line separator in a quoted value'],
        ['', 'empty'],
        [5, 'a number'],
        [['text/plain'], 'an array'],
      ]) {
        const bad = await world.post('/echo', await craftJwe(key, { kid, cty, reply_jwk: replyKey.publicJwk }));
        t.match([bad.status, await bad.json()], [400, { error: 'invalid_compact_jwe', reason: /cty/ }], `cty: ${label}`);
      }
      t.equal(upstream.seen.length, before, 'no cty that is not a media type reaches the seller');
    });

    await t.test('each refusal, in the spec’s order, before anything is forwarded', async (t) => {
      const reply_jwk = replyKey.publicJwk;
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const privateJwk = privateKey.export({ format: 'jwk' });
      const good = await craftJwe(key, { kid, reply_jwk });
      const [h, , iv, ct, tag] = good.split('.');
      const cases: [string, string, string][] = [
        ['four segments', good.split('.').slice(0, 4).join('.'), 'invalid_compact_jwe'],
        ['six segments', `${good}.x`, 'invalid_compact_jwe'],
        ['not base64url', good.replace('.', '.*'), 'invalid_compact_jwe'],
        ['a header that is not JSON', `${Buffer.from('{"alg":').toString('base64url')}..${iv}.${ct}.${tag}`, 'invalid_compact_jwe'],
        ['a NUL byte', `${good}\u0000`, 'invalid_compact_jwe'],
        ['a key-wrapping alg', await craftJwe(key, { alg: 'ECDH-ES+A256KW', kid, reply_jwk }), 'unsupported_jwe_suite'],
        [
          'another enc',
          good.replace(h!, Buffer.from(JSON.stringify({ alg: 'ECDH-ES', enc: 'A128GCM', kid })).toString('base64url')),
          'unsupported_jwe_suite',
        ],
        ['compression', await craftJwe(key, { zip: 'DEF', kid, reply_jwk }), 'unsupported_jwe_suite'],
        ['no kid, and a private reply key', await craftJwe(key, { reply_jwk: { ...privateJwk } }), 'jwe_kid_required'],
        ['an empty kid', await craftJwe(key, { kid: '', reply_jwk }), 'jwe_kid_required'],
        ['a kid of no key here', await craftJwe(key, { kid: 'hjwk_000000000000000000000000', reply_jwk }), 'unknown_jwe_kid'],
        ['a private reply key', await craftJwe(key, { kid, reply_jwk: { ...privateJwk } }), 'private_reply_jwk'],
        ['a symmetric reply key', await craftJwe(key, { kid, reply_jwk: { kty: 'oct', k: 'c2VjcmV0' } }), 'private_reply_jwk'],
        ['no reply key', await craftJwe(key, { kid }), 'invalid_reply_jwk'],
        ['a P-384 reply key', await craftJwe(key, { kid, reply_jwk: { ...reply_jwk, crv: 'P-384' } }), 'invalid_reply_jwk'],
        ['a reply key off the curve', await craftJwe(key, { kid, reply_jwk: { ...reply_jwk, y: reply_jwk.x } }), 'invalid_reply_jwk'],
        ['a reply key as a string', await craftJwe(key, { kid, reply_jwk: JSON.stringify(reply_jwk) }), 'invalid_reply_jwk'],
        // Coordinates are base64url strings: an object with a length would have Buffer.from fill
        // that many bytes, an array of numbers would pass as bytes.
        ['an epk x that claims a length', withEpk(good, { x: { length: 20_000_000 } }), 'unsupported_jwe_suite'],
        ['an epk y of 32 numbers', withEpk(good, { y: Array.from({ length: 32 }, () => 7) }), 'unsupported_jwe_suite'],
        ['an epk x of 31 bytes', withEpk(good, { x: Buffer.alloc(31, 1).toString('base64url') }), 'unsupported_jwe_suite'],
      ];
      const before = upstream.seen.length;
      for (const [label, body, code] of cases) {
        const res = await world.post('/echo', body);
        const answer = (await res.json()) as { error: string; reason: unknown };
        t.same([res.status, answer.error], [400, code], label);
        t.type(answer.reason, 'string');
      }
      t.equal(upstream.seen.length, before, 'not one reached the seller');

      // A payment proof that would itself be refused (garbled, or an MPP credential of no challenge
      // here) does not get ahead of them: the JWE is answered first.
      const unknownKid = await craftJwe(key, { kid: 'hjwk_000000000000000000000000', reply_jwk });
      for (const [label, header] of [
        ['a garbled x402 payment', { 'payment-signature': 'not-a-payment' }],
        ['a garbled MPP credential', { authorization: 'Payment not-a-credential' }],
      ] as const) {
        const res = await world.post('/echo', unknownKid, { ...JOSE, ...header });
        t.same([res.status, ((await res.json()) as { error: string }).error], [400, 'unknown_jwe_kid'], label);
      }
    });

    await t.test('a tampered ciphertext is refused, not forwarded', async (t) => {
      const body = await encryptRequest(jwks, '{"amount":1}', { replyKey, contentType: 'application/json' });
      const parts = body.split('.');
      parts[3] = `${parts[3]!.startsWith('A') ? 'B' : 'A'}${parts[3]!.slice(1)}`;
      const before = upstream.seen.length;
      const res = await world.post('/echo', parts.join('.'));
      t.match([res.status, await res.json()], [400, { error: 'invalid_compact_jwe', reason: /does not decrypt/ }]);
      t.equal(upstream.seen.length, before);
    });

    await t.test('the seller’s error answers are encrypted too; hub’s own stay clear', async (t) => {
      const res = await world.post('/status/418', await encryptRequest(jwks, 'x', { replyKey }));
      t.equal(res.status, 418);
      t.equal(res.headers.get('content-type'), 'application/jose');
      t.same(JSON.parse(new TextDecoder().decode((await decryptReply(await res.text(), replyKey)).plaintext)), { status: 418 });
      const empty = await world.post('/status/204', await encryptRequest(jwks, 'x', { replyKey }));
      t.same([empty.status, await empty.text()], [204, ''], 'an empty body stays empty');
      t.equal(empty.headers.get('content-length'), null, 'a 204 carries no Content-Length');
      const compressed = await world.post('/gzip', await encryptRequest(jwks, 'x', { replyKey }));
      t.match(
        [compressed.status, await compressed.json()],
        [502, { error: 'upstream_error', reason: /compressed/ }],
        'a compressed answer is not sealed unreadable',
      );
      const emptyOk = await world.post('/empty', await encryptRequest(jwks, 'x', { replyKey }));
      t.same([emptyOk.status, emptyOk.headers.get('content-length'), await emptyOk.text()], [200, '0', '']);
      const unknown = await hub.pay('nobody', '/echo', { method: 'POST', headers: JOSE, body: 'x' });
      t.same(await unknown.json(), { error: 'seller_not_found' });
    });

    await t.test('an event stream is encrypted chunk by chunk, and its end is marked', async (t) => {
      const res = await world.post('/sse', await encryptRequest(jwks, '', { replyKey }));
      t.equal(res.status, 200);
      t.equal(res.headers.get('content-type'), 'text/event-stream');
      const events = decryptEventStream(res.body as unknown as AsyncIterable<Uint8Array>, replyKey);
      const first = await events.next();
      t.equal(new TextDecoder().decode(first.value as Uint8Array), 'data: first\n\n', 'the first event arrives before the seller finishes');
      upstream.release();
      const rest: string[] = [];
      for await (const chunk of events) rest.push(new TextDecoder().decode(chunk));
      t.same(rest.join(''), 'data: second\n\n');
    });

    await t.test('every message hub encrypts has an ephemeral key of its own', async (t) => {
      const epkOf = (compact: string) =>
        (JSON.parse(Buffer.from(compact.split('.')[0]!, 'base64url').toString()) as { epk: { x: string } }).epk.x;
      const replies = await Promise.all(
        [1, 2].map(async () => (await world.post('/echo', await encryptRequest(jwks, 'x', { replyKey }))).text()),
      );
      // The held stream was released above: its chunks come at once (perhaps as one), then the end.
      const sse = await world.post('/sse', await encryptRequest(jwks, '', { replyKey }));
      const events = [...(await sse.text()).matchAll(/^data: (\S+)$/gm)].map((m) => m[1]!);
      t.ok(events.length >= 2, 'the events and the end');
      const keys = [...replies, ...events].map(epkOf);
      t.equal(new Set(keys).size, keys.length, 'no two share one');
    });

    await t.test('a cut stream is told from a complete one', async (t) => {
      const replyKeyForCut = await createReplyKey();
      const { agreeWith, encryptCompactJwe, publicPoint } = await import('../../../proxy/encryption/compact-jwe.js');
      const to = publicPoint(replyKeyForCut.publicJwk as { x: string; y: string });
      const event = (seq: number, extra = {}) =>
        `data: ${encryptCompactJwe(new TextEncoder().encode(`e${seq}`), agreeWith(to), { seq, ...extra })}\n\n`;
      const stream = async function* (text: string) {
        yield new TextEncoder().encode(text);
      };
      const read = async (text: string) => {
        const out: string[] = [];
        for await (const chunk of decryptEventStream(stream(text), replyKeyForCut)) out.push(new TextDecoder().decode(chunk));
        return out;
      };
      t.same(await read(event(0) + event(1) + event(2, { end: true })), ['e0', 'e1']);
      await t.rejects(read(event(0) + event(1)), /cut off/);
      await t.rejects(read(event(1)), /arrived where 0 was due/);
    });

    await t.test('a key retired mid-flight: its requests meet unknown_jwe_kid, the newer key works', async (t) => {
      const newer = await world.addKey();
      const both = await world.published([newer, kid]);
      const toOld = await encryptRequest(both, '{"n":1}', { replyKey, kid, contentType: 'application/json' });
      t.equal((await world.post('/echo', toOld)).status, 200, 'the older key still works while active');
      await world.retireKey(kid);
      const remaining = await world.published([newer]);
      const before = upstream.seen.length;
      const refused = await world.post('/echo', toOld);
      t.match([refused.status, await refused.json()], [400, { error: 'unknown_jwe_kid', reason: /fetch the JWKS again/ }]);
      t.equal(upstream.seen.length, before);
      const res = await world.post('/echo', await encryptRequest(remaining, '{"n":2}', { replyKey, contentType: 'application/json' }));
      t.equal(res.status, 200);
      t.equal(JSON.parse(new TextDecoder().decode((await decryptReply(await res.text(), replyKey)).plaintext)).body, '{"n":2}');
    });
  });
}

t.test('in spare mode, the reply’s agreement runs on a worker while the proxy has nothing else to do', async (t) => {
  const hub = await startTestHub(t, 'sqlite');
  const upstream = await startTestUpstream(t);
  const seller = await sellerBehind(hub, upstream);
  const world = encryptingWorld(hub, seller.id);
  const codec = hub.proxy.services.jwe;
  t.equal(codec.name, 'spare(1)', 'the default');
  const early: Array<{ others: number; onWorker: boolean }> = [];
  const agreeEarly = codec.agreeEarly.bind(codec);
  codec.agreeEarly = (to, others) => {
    const agreement = agreeEarly(to, others);
    early.push({ others, onWorker: agreement !== undefined });
    return agreement;
  };
  const jwks = await world.published([await world.addKey()]);
  const replyKey = await createReplyKey();
  const call = async (i: number) => {
    const res = await world.post(`/echo/${i}`, await encryptRequest(jwks, `{"i":${i}}`, { replyKey, contentType: 'application/json' }));
    return JSON.parse(new TextDecoder().decode((await decryptReply(await res.text(), replyKey)).plaintext)).body;
  };

  t.equal(await call(0), '{"i":0}', 'the first call is served while the thread starts');
  t.same(early[0], { others: 0, onWorker: false }, 'the thread is not up yet: inline');
  // One call at a time until the thread is up (it starts with the first encrypted request).
  for (let i = 1; i <= 200 && !early.at(-1)!.onWorker; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    t.equal(await call(i), `{"i":${i}}`);
  }
  t.same(early.at(-1), { others: 0, onWorker: true }, 'alone, a call’s reply is agreed on the worker');

  early.length = 0;
  const calls = await Promise.all(Array.from({ length: 10 }, (_, i) => call(100 + i)));
  t.same(
    calls,
    Array.from({ length: 10 }, (_, i) => `{"i":${100 + i}}`),
    'ten at once, each answered to its own body',
  );
  t.ok(
    early.some((e) => e.others > 0 && !e.onWorker),
    'with other requests in progress, the agreement stays on the event loop',
  );
  t.ok(
    early.every((e) => e.onWorker === (e.others === 0)),
    'and only then',
  );
});

t.test('on worker threads, with a response limit', async (t) => {
  const hub = await startTestHub(t, 'sqlite', {
    HUB_JWE_MODE: 'pool',
    HUB_JWE_THREADS: '2',
    HUB_MAX_ENCRYPTED_RESPONSE_BYTES: '100000',
  });
  const upstream = await startTestUpstream(t);
  const seller = await sellerBehind(hub, upstream);
  const world = encryptingWorld(hub, seller.id);
  t.equal(hub.proxy.services.jwe.name, 'pool(2)');
  const jwks = await world.published([await world.addKey()]);
  const replyKey = await createReplyKey();

  const calls = await Promise.all(
    Array.from({ length: 20 }, async (_, i) => {
      const res = await world.post(`/echo/${i}`, await encryptRequest(jwks, `{"i":${i}}`, { replyKey, contentType: 'application/json' }));
      return JSON.parse(new TextDecoder().decode((await decryptReply(await res.text(), replyKey)).plaintext)).body;
    }),
  );
  t.same(
    calls,
    Array.from({ length: 20 }, (_, i) => `{"i":${i}}`),
    'twenty concurrent calls, each answered to its own body',
  );

  // An agent's header may hold any JSON, nested deeper than a copy to a worker can go (written
  // here as text: JSON.stringify cannot either). What goes to the worker is only what decryption
  // reads, so such a header is answered as inline: refused, since its tag no longer matches.
  const [h, ...rest] = (await encryptRequest(jwks, 'x', { replyKey })).split('.');
  const header = Buffer.from(h!, 'base64url').toString();
  const deep = `${header.slice(0, -1)},"pad":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
  const nested = await world.post('/echo/deep', [Buffer.from(deep).toString('base64url'), ...rest].join('.'));
  t.match(
    [nested.status, await nested.json()],
    [400, { error: 'invalid_compact_jwe', reason: /does not decrypt/ }],
    'a header nested 20,000 deep',
  );

  const big = await world.post('/big', await encryptRequest(jwks, 'x', { replyKey }));
  t.match([big.status, await big.json()], [502, { error: 'upstream_error', reason: /larger than hub encrypts \(100000 bytes\)/ }]);
});

t.test('the SDK will not put a private reply key in a header anyone on the way can read', async (t) => {
  const replyKey = await createReplyKey();
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwks: Jwks = {
    keys: [{ kty: 'EC', crv: 'P-256', x: replyKey.publicJwk.x!, y: replyKey.publicJwk.y!, kid: 'hjwk_x', use: 'enc', alg: 'ECDH-ES' }],
  };
  await t.rejects(
    encryptRequest(jwks, 'x', { replyKey: { ...replyKey, publicJwk: privateKey.export({ format: 'jwk' }) } }),
    /private key material/,
  );
  t.type(await encryptRequest(jwks, 'x', { replyKey }), 'string', 'a public one is sent');
});
