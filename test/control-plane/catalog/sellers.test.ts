import { createPrivateKey, createPublicKey } from 'node:crypto';
import t from 'tap';
import { newId } from '../../../shared/ids.js';
import { openSecret } from '../../../shared/secret-box.js';
import { startTestControlPlane } from '../../helpers/control-plane.js';
import { testProviders } from '../../helpers/database.js';
import { managementClient } from '../../helpers/management.js';

const SELLER = { name: 'Weather', slug: 'weather', upstreamBaseUrl: 'https://api.weather.example/v2' };

for (const provider of testProviders()) {
  t.test(provider, async (t) => {
    const cp = await startTestControlPlane(t, provider, { HUB_PAY_DOMAIN: 'pay.example.net' });
    const api = managementClient(cp.url);
    const { apiKey: key, sessionToken } = await cp.bootstrap();
    const other = await cp.bootstrap();

    t.test('create, read, list, update and delete a seller', async (t) => {
      const created = await api.post('/v1/sellers', key, {
        ...SELLER,
        payToAddress: '0xAbCdEf0000000000000000000000000000000001',
        networks: ['eip155:8453', 'eip155:84532'],
        hostnames: ['Pay.Weather.Example.'],
      });
      t.equal(created.status, 201);
      const seller = created.body.seller;
      t.match(seller, {
        name: 'Weather',
        slug: 'weather',
        payHost: 'weather.pay.example.net',
        upstreamBaseUrl: SELLER.upstreamBaseUrl,
        payToAddress: '0xabcdef0000000000000000000000000000000001',
        networks: ['eip155:8453', 'eip155:84532'],
        hostnames: ['pay.weather.example'],
      });
      t.match(seller.id, /^sel_[0-9A-Za-z]{24}$/);
      t.equal(created.headers.get('cache-control'), 'no-store');

      t.same((await api.get(`/v1/sellers/${seller.id}`, sessionToken)).body, { seller });
      t.same((await api.get('/v1/sellers', key)).body, { sellers: [seller] });

      const updated = await api.patch(`/v1/sellers/${seller.id}`, key, {
        name: 'Weather Co',
        slug: 'weather-co',
        payToAddress: null,
        networks: [],
        hostnames: ['a.weather.example', 'b.weather.example'],
      });
      t.equal(updated.status, 200);
      t.match(updated.body.seller, {
        name: 'Weather Co',
        slug: 'weather-co',
        payHost: 'weather-co.pay.example.net',
        payToAddress: null,
        networks: [],
        hostnames: ['a.weather.example', 'b.weather.example'],
      });
      t.equal(updated.body.seller.upstreamBaseUrl, SELLER.upstreamBaseUrl, 'fields not sent stay');

      // Another organization neither sees nor changes it.
      t.same((await api.get('/v1/sellers', other.apiKey)).body, { sellers: [] });
      t.match(await api.patch(`/v1/sellers/${seller.id}`, other.apiKey, { name: 'mine' }), {
        status: 404,
        body: { error: 'seller_not_found' },
      });

      const deleted = await api.delete(`/v1/sellers/${seller.id}`, key);
      t.equal(deleted.status, 204);
      t.equal(deleted.body, undefined);
      t.match(await api.get(`/v1/sellers/${seller.id}`, key), { status: 404, body: { error: 'seller_not_found' } });
      t.equal(await cp.db.sellerHostname.count({ where: { sellerId: seller.id } }), 0, 'hostnames went with it');
    });

    t.test('slugs and hostnames are unique across hub, since they are hosts', async (t) => {
      const first = (await api.post('/v1/sellers', key, { ...SELLER, slug: 'unique-one', hostnames: ['shop.example.org'] })).body.seller;
      t.match(await api.post('/v1/sellers', other.apiKey, { ...SELLER, slug: 'unique-one' }), {
        status: 409,
        body: { error: 'duplicate_slug' },
      });
      t.match(await api.post('/v1/sellers', other.apiKey, { ...SELLER, slug: 'unique-two', hostnames: ['shop.example.org'] }), {
        status: 409,
        body: { error: 'duplicate_hostname' },
      });
      t.equal(await cp.db.seller.count({ where: { slug: 'unique-two' } }), 0, 'the refused create left nothing behind');
      const second = (await api.post('/v1/sellers', key, { ...SELLER, slug: 'unique-three' })).body.seller;
      t.match(await api.patch(`/v1/sellers/${second.id}`, key, { slug: 'unique-one' }), { status: 409, body: { error: 'duplicate_slug' } });
      t.match(await api.patch(`/v1/sellers/${second.id}`, key, { hostnames: ['shop.example.org'] }), {
        status: 409,
        body: { error: 'duplicate_hostname' },
      });
      t.equal(
        (await api.patch(`/v1/sellers/${first.id}`, key, { hostnames: ['shop.example.org'] })).status,
        200,
        'keeping its own hostname is fine',
      );
    });

    t.test('malformed seller fields are 400 with a message naming the field', async (t) => {
      const cases: [string, Record<string, unknown>, RegExp][] = [
        ['slug with capitals', { ...SELLER, slug: 'Weather' }, /^slug: /],
        ['slug too long', { ...SELLER, slug: 'a'.repeat(64) }, /^slug: /],
        ['slug with a leading hyphen', { ...SELLER, slug: '-weather' }, /^slug: /],
        ['empty name', { ...SELLER, name: ' ' }, /^name: /],
        // A name reaches the claim mails hub sends: a line break would write lines of its own.
        ['a name over two lines', { ...SELLER, name: 'Weather\n\nOpen https://phish.example to confirm' }, /^name: must be one line/],
        ['a name with a control character', { ...SELLER, name: 'Weather\u0007' }, /^name: must be one line/],
        ['a name with a line separator', { ...SELLER, name: 'Weather\u2028Co' }, /^name: must be one line/],
        ['ftp upstream', { ...SELLER, upstreamBaseUrl: 'ftp://x.example' }, /^upstreamBaseUrl: /],
        ['upstream with credentials', { ...SELLER, upstreamBaseUrl: 'https://u:p@x.example' }, /^upstreamBaseUrl: /],
        ['relative upstream', { ...SELLER, upstreamBaseUrl: '/api' }, /^upstreamBaseUrl: /],
        ['short wallet', { ...SELLER, payToAddress: '0x1234' }, /^payToAddress: /],
        ['network not CAIP-2', { ...SELLER, networks: ['base'] }, /^networks\.0: /],
        ['repeated network', { ...SELLER, networks: ['eip155:1', 'eip155:1'] }, /^networks: /],
        ['hostname with a path', { ...SELLER, hostnames: ['x.example/path'] }, /^hostnames\.0: /],
        ['hostname localhost', { ...SELLER, hostnames: ['localhost'] }, /^hostnames\.0: must be a hostname/],
        ['IPv4 literal hostname', { ...SELLER, hostnames: ['10.0.0.1'] }, /^hostnames\.0: must be a hostname, not an IP address/],
        ['IPv6 literal hostname', { ...SELLER, hostnames: ['[::1]'] }, /^hostnames\.0: must be a hostname/],
        ['hostname under the pay domain', { ...SELLER, hostnames: ['shop.pay.example.net'] }, /^hostnames: .*pay domain/],
        ['unknown settlement timing', { ...SELLER, settlement: 'later' }, /^settlement: /],
        ['unknown field', { ...SELLER, colour: 'blue' }, /Unrecognized key/],
        ['number for a string', { ...SELLER, name: 5 }, /^name: /],
      ];
      for (const [label, body, message] of cases) {
        const reply = await api.post('/v1/sellers', key, body);
        t.equal(reply.status, 400, label);
        t.match(reply.body.error, message, label);
        t.same(Object.keys(reply.body), ['error'], `${label}: only the message`);
      }
      t.match(await api.get('/v1/sellers/sel_short', key), { status: 400, body: { error: /^sellerId: must be a seller id/ } });
      t.match(await api.get(`/v1/sellers/${newId('service')}`, key), { status: 400 }, 'an id of another kind is malformed too');
      t.match(await api.get(`/v1/sellers/${newId('seller')}`, key), { status: 404, body: { error: 'seller_not_found' } });
    });

    t.test('stateful access: default endpoint, override, reset; flags are not the API’s', async (t) => {
      const seller = (
        await api.post('/v1/sellers', key, { ...SELLER, slug: 'stateful', upstreamBaseUrl: 'https://api.shop.example:8443/v1/base' })
      ).body.seller;
      const path = `/v1/sellers/${seller.id}/stateful-access`;
      t.same((await api.get(path, key)).body, {
        accessEndpointUrl: 'https://api.shop.example:8443/zeroclick/access',
        salesEnabled: false,
        servicingEnabled: false,
      });

      const put = await api.put(path, key, { accessEndpointUrl: 'https://accounts.shop.example/hub/access' });
      t.equal(put.status, 200);
      t.same(put.body, {
        accessEndpointUrl: 'https://accounts.shop.example/hub/access',
        salesEnabled: false,
        servicingEnabled: false,
        stateful: false,
        accountWriteVariant: 'original',
      });
      const { stateful: _, accountWriteVariant: __, ...firstVariant } = put.body;
      t.same((await api.get(path, sessionToken)).body, firstVariant);

      t.match(await api.put(path, key, { accessEndpointUrl: 'https://x.example', salesEnabled: true }), {
        status: 400,
        body: { error: /Unrecognized key/ },
      });
      t.match(await api.put(path, key, { accessEndpointUrl: 'not a url' }), { status: 400, body: { error: /^accessEndpointUrl: / } });
      t.match(await api.put(path, key, {}), { status: 400, body: { error: /Send accessEndpointUrl, stateful or accountWriteVariant/ } });
      for (const stateful of ['yes', 'false', 1, null]) {
        t.match(await api.put(path, key, { stateful }), { status: 400, body: { error: /^stateful: / } }, JSON.stringify(stateful));
      }

      // The seller's own choice: take account writes (sales and servicing stay the operator's).
      t.match(await api.put(path, key, { stateful: true }), {
        status: 200,
        body: { stateful: true, accessEndpointUrl: 'https://accounts.shop.example/hub/access', salesEnabled: false },
      });
      t.same((await api.get(`${path}?variant=later`, key)).body, {
        stateful: true,
        accessEndpointUrl: 'https://accounts.shop.example/hub/access',
      });
      await api.put(path, key, { stateful: false });

      await cp.db.seller.update({ where: { id: seller.id }, data: { salesEnabled: true } });
      t.same((await api.put(path, key, { accessEndpointUrl: null })).body, {
        accessEndpointUrl: 'https://api.shop.example:8443/zeroclick/access',
        salesEnabled: true,
        servicingEnabled: false,
        stateful: false,
        accountWriteVariant: 'original',
      });
      t.match(await api.put(path, key, { accountWriteVariant: 'later' }), { status: 200, body: { accountWriteVariant: 'later' } });
      t.match(await api.put(path, key, { accountWriteVariant: 'newest' }), { status: 400, body: { error: /^accountWriteVariant: / } });
    });

    t.test('signing secrets: shown once, sealed at rest, newest active signs, rotate and retire', async (t) => {
      const seller = (await api.post('/v1/sellers', key, { ...SELLER, slug: 'signer' })).body.seller;
      const base = `/v1/sellers/${seller.id}/signing-secrets`;
      t.same((await api.get(base, key)).body, { signingSecrets: [] });

      const first = await api.post(base, key);
      t.equal(first.status, 201);
      t.match(first.body, {
        signingSecret: { sellerId: seller.id, status: 'active', signing: true, retiredAt: null },
        secret: /^hubsk_[0-9A-Za-z]{40}$/,
      });
      const stored = await cp.db.signingSecret.findUniqueOrThrow({ where: { id: first.body.signingSecret.id } });
      t.not(stored.encryptedSecret.includes(first.body.secret), true, 'not stored in clear');
      t.equal(openSecret(cp.masterKey, stored.encryptedSecret), first.body.secret, 'sealed under the master key');

      const second = (await api.post(base, key)).body;
      const listed = (await api.get(base, key)).body.signingSecrets;
      t.same(
        listed.map((s: { id: string }) => s.id),
        [second.signingSecret.id, first.body.signingSecret.id],
        'newest first',
      );
      t.same(
        listed.map((s: { signing: boolean }) => s.signing),
        [true, false],
        'the newest active one signs',
      );
      t.notOk(JSON.stringify(listed).includes('hubsk_'), 'values are never listed');

      const retired = await api.post(`${base}/${second.signingSecret.id}/retire`, key);
      t.match(retired, { status: 200, body: { signingSecret: { status: 'retired', signing: false, retiredAt: String } } });
      t.match(
        (await api.get(`${base}/${first.body.signingSecret.id}`, key)).body,
        { signingSecret: { status: 'active', signing: true } },
        'the older active one signs again',
      );
      t.match(
        await api.post(`${base}/${second.signingSecret.id}/retire`, key),
        { status: 200, body: { signingSecret: { status: 'retired' } } },
        'retiring twice is harmless',
      );

      const rotated = await api.post(`${base}/rotate`, key);
      t.equal(rotated.status, 201);
      const after = (await api.get(base, key)).body.signingSecrets;
      t.same(
        after.map((s: { status: string; signing: boolean }) => [s.status, s.signing]),
        [
          ['active', true],
          ['retired', false],
          ['retired', false],
        ],
        'rotation leaves exactly the new secret active',
      );

      t.match(await api.get(`${base}/${newId('signingSecret')}`, key), { status: 404, body: { error: 'signing_secret_not_found' } });
      t.match(await api.post(`${base}/nope/retire`, key), { status: 400, body: { error: /^signingSecretId: / } });
      const otherSeller = (await api.post('/v1/sellers', other.apiKey, { ...SELLER, slug: 'other-signer' })).body.seller;
      const otherSecret = (await api.post(`/v1/sellers/${otherSeller.id}/signing-secrets`, other.apiKey)).body.signingSecret;
      t.match(
        await api.post(`${base}/${otherSecret.id}/retire`, key),
        { status: 404, body: { error: 'signing_secret_not_found' } },
        'a secret of another seller',
      );
    });

    t.test('encryption keys: made by hub, private half sealed and never shown, retire leaves the rest', async (t) => {
      const seller = (await api.post('/v1/sellers', key, { ...SELLER, slug: 'sealer' })).body.seller;
      const base = `/v1/sellers/${seller.id}/encryption-keys`;
      t.same((await api.get(base, key)).body, { encryptionKeys: [] });

      const first = await api.post(base, key);
      t.equal(first.status, 201);
      const made = first.body.encryptionKey;
      t.match(made, {
        id: /^hjwk_[0-9A-Za-z]{24}$/,
        sellerId: seller.id,
        status: 'active',
        publicJwk: { kty: 'EC', crv: 'P-256', x: /^[A-Za-z0-9_-]{43}$/, y: /^[A-Za-z0-9_-]{43}$/, use: 'enc', alg: 'ECDH-ES' },
        retiredAt: null,
      });
      t.equal(made.publicJwk.kid, made.id, 'the key id is the kid');
      t.same(Object.keys(first.body), ['encryptionKey']);
      t.notOk('d' in made.publicJwk, 'no private part in the answer');
      const stored = await cp.db.encryptionKey.findUniqueOrThrow({ where: { id: made.id } });
      const d = openSecret(cp.masterKey, stored.encryptedPrivateKey);
      t.match(d, /^[A-Za-z0-9_-]{43}$/, 'the private scalar is sealed under the master key');
      t.notOk(stored.encryptedPrivateKey.includes(d), 'not stored in clear');
      const pair = createPrivateKey({ key: { ...made.publicJwk, d }, format: 'jwk' });
      t.equal(createPublicKey(pair).export({ format: 'jwk' }).x, made.publicJwk.x, 'the sealed scalar is the published key’s');

      const second = (await api.post(base, key)).body.encryptionKey;
      const listed = (await api.get(base, key)).body.encryptionKeys;
      t.same(
        listed.map((k: { id: string }) => k.id),
        [second.id, made.id],
        'newest first',
      );
      t.notOk(JSON.stringify(listed).includes(d), 'never listed');

      const retired = await api.post(`${base}/${made.id}/retire`, key);
      t.match(retired, { status: 200, body: { encryptionKey: { id: made.id, status: 'retired', retiredAt: String } } });
      t.match(
        await api.post(`${base}/${made.id}/retire`, key),
        { status: 200, body: { encryptionKey: { status: 'retired' } } },
        'twice is harmless',
      );
      t.match((await api.get(`${base}/${second.id}`, key)).body, { encryptionKey: { status: 'active' } });

      t.match(await api.get(`${base}/${newId('encryptionKey')}`, key), { status: 404, body: { error: 'encryption_key_not_found' } });
      t.match(await api.post(`${base}/nope/retire`, key), { status: 400, body: { error: /^encryptionKeyId: / } });
      t.match(await api.post(base, key, { d: 'mine' }), { status: 400 }, 'a key is made by hub, never imported');
      const otherSeller = (await api.post('/v1/sellers', other.apiKey, { ...SELLER, slug: 'other-sealer' })).body.seller;
      const otherKey = (await api.post(`/v1/sellers/${otherSeller.id}/encryption-keys`, other.apiKey)).body.encryptionKey;
      t.match(
        await api.post(`${base}/${otherKey.id}/retire`, key),
        { status: 404, body: { error: 'encryption_key_not_found' } },
        'a key of another seller',
      );
      t.match(await api.post(`/v1/sellers/${otherSeller.id}/encryption-keys`, key), { status: 404, body: { error: 'seller_not_found' } });
    });

    t.test('every catalog write marks the seller changed for proxy caches', async (t) => {
      const seller = (await api.post('/v1/sellers', key, { ...SELLER, slug: 'touched' })).body.seller;
      const stamp = async () => (await cp.db.seller.findUniqueOrThrow({ where: { id: seller.id } })).updatedAt.getTime();
      const writes: [string, () => Promise<unknown>][] = [
        ['hostnames', () => api.patch(`/v1/sellers/${seller.id}`, key, { hostnames: ['touched.example'] })],
        ['signing secret', () => api.post(`/v1/sellers/${seller.id}/signing-secrets`, key)],
        ['encryption key', () => api.post(`/v1/sellers/${seller.id}/encryption-keys`, key)],
        ['stateful access', () => api.put(`/v1/sellers/${seller.id}/stateful-access`, key, { accessEndpointUrl: 'https://t.example/a' })],
        ['service', () => api.post('/v1/services', key, { sellerId: seller.id, name: 'S', slug: 's' })],
      ];
      for (const [label, write] of writes) {
        const before = await stamp();
        await new Promise((resolve) => setTimeout(resolve, 5));
        await write();
        t.ok((await stamp()) > before, label);
      }
    });

    t.test('a seller with buyer accounts or payments is not deleted', async (t) => {
      const seller = (await api.post('/v1/sellers', key, { ...SELLER, slug: 'with-history' })).body.seller;
      const row = await cp.db.seller.findUniqueOrThrow({ where: { id: seller.id } });
      await cp.db.paymentAttempt.create({
        data: {
          id: newId('paymentAttempt'),
          organizationId: row.organizationId,
          sellerId: seller.id,
          requestId: newId('request'),
          kind: 'call',
          method: 'GET',
          pathAndQuery: '/',
          bodyDigest: '0'.repeat(64),
          amountMicros: 10_000n,
          status: 'settled',
        },
      });
      t.match(await api.delete(`/v1/sellers/${seller.id}`, key), { status: 409, body: { error: 'resource_in_use' } });
      t.equal((await api.get(`/v1/sellers/${seller.id}`, key)).status, 200);
    });
  });
}
