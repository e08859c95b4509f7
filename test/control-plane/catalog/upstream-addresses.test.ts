import t, { type Test } from 'tap';
import { startTestControlPlane } from '../../helpers/control-plane.js';
import { testProviders } from '../../helpers/database.js';
import { managementClient } from '../../helpers/management.js';

// Where a seller may point hub: never at hub itself (its pay URL, its ports, a hostname it
// serves), never at link-local or cloud metadata addresses; loopback and private addresses
// only while HUB_PRIVATE_UPSTREAMS is on (the default). The pay domain is the default
// pay.localhost, the ports the defaults 8400 and 8402.

const hubItself = [
  'http://weather.pay.localhost:8402/v1', // a pay URL of this hub, the loop
  'https://other.pay.localhost/', // any host under the pay domain, whatever the port
  'http://127.0.0.1:8402/', // the proxy's port on this machine
  'http://[::1]:8400/', // the control-plane's
  'http://localhost:8400/api', // a name that resolves to this machine, at the control-plane's port
  'http://api.localhost:8402/',
];

const metadata = [
  'http://169.254.169.254/latest/meta-data',
  'http://169.254.0.10:8080/',
  'http://[fe80::1]/',
  'http://[fd00:ec2::254]/',
  'http://[::ffff:169.254.169.254]/',
  'http://metadata.google.internal/computeMetadata/v1',
  'http://metadata.google.internal./',
  'http://100.100.100.200/',
];

const privateOrLoopback = ['http://127.0.0.1:9999/api', 'http://10.0.0.5:8080/', 'http://[fd12::1]/', 'http://localhost:9999/'];

for (const provider of testProviders()) {
  t.test(provider, async (t) => {
    const cp = await startTestControlPlane(t, provider);
    const api = managementClient(cp.url);
    const { apiKey: key } = await cp.bootstrap();
    let n = 0;
    const create = (upstreamBaseUrl: string, extra: Record<string, unknown> = {}) =>
      api.post('/v1/sellers', key, { name: 'S', slug: `s${++n}`, upstreamBaseUrl, ...extra });

    const refused = (t: Test, reply: { status: number; body: any }, field: string, why: RegExp) => {
      t.equal(reply.status, 422);
      t.equal(reply.body.error, 'upstream_not_allowed');
      t.match(reply.body.reason, new RegExp(`^${field}: `));
      t.match(reply.body.reason, why);
    };

    t.test('an upstream that is hub itself is refused on create', async (t) => {
      for (const url of hubItself) refused(t, await create(url), 'upstreamBaseUrl', /loop|control-plane/);
      t.same((await api.get('/v1/sellers', key)).body, { sellers: [] }, 'nothing was created');
    });

    t.test('link-local and cloud metadata upstreams are refused on create', async (t) => {
      for (const url of metadata) refused(t, await create(url), 'upstreamBaseUrl', /link-local|metadata/);
    });

    t.test('a hostname this hub serves is refused as an upstream, in the same request or another', async (t) => {
      t.equal((await create('https://api.shop.example/', { hostnames: ['pay.shop.example'] })).status, 201);
      refused(t, await create('https://pay.shop.example/v1'), 'upstreamBaseUrl', /custom hostname this hub serves/);
      refused(t, await create('https://api.own.example/', { hostnames: ['api.own.example'] }), 'upstreamBaseUrl', /loop/);
    });

    t.test('on update the same rules hold, and the seller keeps its upstream', async (t) => {
      const created = await create('http://127.0.0.1:9/api');
      t.equal(created.status, 201);
      const path = `/v1/sellers/${created.body.seller.id}`;
      refused(
        t,
        await api.patch(path, key, { upstreamBaseUrl: `http://${created.body.seller.slug}.pay.localhost:8402/` }),
        'upstreamBaseUrl',
        /pay URL of this hub/,
      );
      refused(t, await api.patch(path, key, { upstreamBaseUrl: 'http://169.254.169.254/' }), 'upstreamBaseUrl', /link-local/);
      refused(t, await api.patch(path, key, { upstreamBaseUrl: 'http://localhost:8402/' }), 'upstreamBaseUrl', /own listener/);
      t.equal((await api.get(path, key)).body.seller.upstreamBaseUrl, 'http://127.0.0.1:9/api');
      t.equal((await api.patch(path, key, { upstreamBaseUrl: 'https://api.weather.example/v2' })).status, 200, 'a public name passes');
    });

    t.test('an account endpoint override follows the same rules', async (t) => {
      const created = await create('https://api.weather.example/');
      const path = `/v1/sellers/${created.body.seller.id}/stateful-access`;
      refused(
        t,
        await api.put(path, key, { accessEndpointUrl: 'http://169.254.169.254/zeroclick/access' }),
        'accessEndpointUrl',
        /link-local/,
      );
      refused(t, await api.put(path, key, { accessEndpointUrl: 'http://127.0.0.1:8400/v1' }), 'accessEndpointUrl', /control-plane/);
      t.equal((await api.put(path, key, { accessEndpointUrl: 'http://127.0.0.1:9000/access' })).status, 200, 'a sidecar is fine');
    });

    t.test('loopback and private upstreams are allowed by default (hub as a sidecar)', async (t) => {
      for (const url of privateOrLoopback) t.equal((await create(url)).status, 201, url);
    });

    t.test('with HUB_PRIVATE_UPSTREAMS=off they are refused, by address or by what a name resolves to', async (t) => {
      const strict = await startTestControlPlane(t, provider, { HUB_PRIVATE_UPSTREAMS: 'off' });
      const strictApi = managementClient(strict.url);
      const { apiKey } = await strict.bootstrap();
      for (const url of privateOrLoopback) {
        const reply = await strictApi.post('/v1/sellers', apiKey, { name: 'S', slug: `p${++n}`, upstreamBaseUrl: url });
        refused(t, reply, 'upstreamBaseUrl', /(loopback|private) address.*HUB_PRIVATE_UPSTREAMS=off/);
      }
      const localhost = await strictApi.post('/v1/sellers', apiKey, {
        name: 'S',
        slug: `p${++n}`,
        upstreamBaseUrl: 'http://localhost:9999/',
      });
      t.match(localhost.body.reason, /localhost resolves to/, 'the name was resolved');
      const publicName = await strictApi.post('/v1/sellers', apiKey, {
        name: 'S',
        slug: `p${++n}`,
        upstreamBaseUrl: 'https://api.weather.example/',
      });
      t.equal(publicName.status, 201, 'a name that does not resolve yet is checked again at connect');
    });
  });
}
