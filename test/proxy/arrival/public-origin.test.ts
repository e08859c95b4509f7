import t from 'tap';
import { testProviders } from '../../helpers/database.js';
import { startTestHub } from '../../helpers/hub.js';
import { startPaidWorld } from '../../helpers/paid-world.js';
import { sellerBehind, startTestUpstream } from '../../helpers/upstream.js';

// The URLs hub hands back, and the scheme the seller is told, follow how the agent reached the pay
// URL: the proxy's own plain HTTP, or, behind a reverse proxy hub is told to trust, what it reports.

const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.weather.example' };

for (const trust of ['off', 'on'] as const) {
  t.test(`HUB_TRUST_PROXY=${trust}`, async (t) => {
    const hub = await startTestHub(t, testProviders()[0]!, { HUB_TRUST_PROXY: trust });
    const upstream = await startTestUpstream(t);
    await sellerBehind(hub, upstream);
    // hub.pay sends Host: acme.pay.localhost (no port).
    const expected = trust === 'on' ? 'https://api.weather.example' : 'http://acme.pay.localhost';

    const refused = await hub.pay('acme', '/echo', { headers: { ...forwarded, authorization: 'Bearer hubagt_unknown' } });
    t.equal(refused.status, 401);
    t.match(await refused.json(), {
      error: 'bearer_required',
      auth: { challengeUrl: `${expected}/agents/challenge`, registerUrl: `${expected}/agents/register` },
    });

    const served = await hub.pay('acme', '/echo', { headers: forwarded });
    t.equal(served.status, 200);
    t.equal(upstream.seen.at(-1)!.headers['x-forwarded-proto'], trust === 'on' ? 'https' : 'http', 'the seller is told the scheme');

    if (trust === 'on') {
      const junk = await hub.pay('acme', '/echo', {
        headers: { authorization: 'Bearer hubagt_unknown', 'x-forwarded-proto': 'gopher', 'x-forwarded-host': 'a b' },
      });
      t.match(await junk.json(), { auth: { challengeUrl: 'http://acme.pay.localhost/agents/challenge' } }, 'malformed reports are ignored');
      const chained = await hub.pay('acme', '/echo', {
        headers: { authorization: 'Bearer hubagt_unknown', 'x-forwarded-proto': 'https, http', 'x-forwarded-host': 'a.example, b.example' },
      });
      t.match(await chained.json(), { auth: { challengeUrl: 'https://a.example/agents/challenge' } }, 'the first hop counts');
    }
  });
}

t.test('a challenge names the resource as the agent reached it', async (t) => {
  const { url } = await startPaidWorld(t, testProviders()[0]!, { env: { HUB_TRUST_PROXY: 'on' } });
  const direct = await fetch(url('/search?q=1'));
  t.match(await direct.json(), { resource: { url: url('/search?q=1') } }, 'without a reverse proxy: the pay URL, port and all');
  const behindProxy = await fetch(url('/search?q=2'), { headers: forwarded });
  t.match(await behindProxy.json(), { resource: { url: 'https://api.weather.example/search?q=2' } });
});
