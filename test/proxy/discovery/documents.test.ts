import { Validator } from '@seriousme/openapi-schema-validator';
import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { extractDiscoveryInfo, validateDiscoveryExtension } from '@x402/extensions/bazaar';
import t from 'tap';
import { privateKeyToAccount } from 'viem/accounts';
import { z } from 'zod';
import { testProviders } from '../../helpers/database.js';
import { startPaidWorld } from '../../helpers/paid-world.js';
import { x402Fetch } from '../../helpers/x402-agent.js';

// The pay URL's discovery documents from a real hub (docs/decisions.md#D-216 … D-220): fetched as
// a crawler does, validated against their published schemas (OpenAPI 3.1 by a maintained
// validator; x-payment-info's offers by the rules of MPP's discovery draft; the Bazaar extension by
// x402's own package), kept current when the catalog changes, and enough for an agent that reads
// nothing else to find a route, its price, and pay for it with the unmodified x402 client.

type Json = Record<string, any>;
const decode = (header: string | null) => JSON.parse(Buffer.from(header ?? '', 'base64').toString('utf8')) as Json;

/** MPP draft-payment-discovery's rules for the multi-offer form, as hub reads them: intent, method, amount in the smallest unit. */
const offers = z.strictObject({
  offers: z
    .array(
      z.strictObject({
        intent: z.enum(['charge', 'session']),
        method: z.string(),
        amount: z
          .string()
          .regex(/^(0|[1-9][0-9]*)$/)
          .nullable(),
        currency: z.string().optional(),
        description: z.string().optional(),
      }),
    )
    .min(1),
});

/** llmstxt.org's structure: an H1 first, a blockquote summary, prose without headings, then H2 sections of link lists. */
function llmsTxtProblems(text: string): string[] {
  const lines = text.split('\n');
  const problems: string[] = [];
  if (!/^# \S/.test(lines[0] ?? '')) problems.push('the first line is not an H1');
  if (!lines.some((l) => l.startsWith('> '))) problems.push('no blockquote summary');
  const firstSection = lines.findIndex((l) => l.startsWith('## '));
  if (firstSection < 0) problems.push('no H2 section');
  if (lines.slice(1, firstSection).some((l) => l.startsWith('#'))) problems.push('a heading before the first H2');
  for (const line of lines.slice(firstSection)) {
    if (!line || line.startsWith('## ')) continue;
    if (!/^- (\[[^\]]+\]\([^)\s]+\)(: .*)?|\(none declared yet\))$/.test(line)) problems.push(`not a link list item: ${line}`);
  }
  return problems;
}

const routes = [
  {
    method: 'GET',
    path: '/search',
    description: 'Search the index',
    usage: [{ meterSlug: 'calls', quantity: 1 }],
    example: { query: { q: 'rain' }, response: { results: ['a', 'b'] } },
  },
  { method: 'POST', path: '/three/{kind}', usage: [{ meterSlug: 'calls', quantity: 3 }] },
];

for (const provider of testProviders()) {
  t.test(`discovery documents at the pay URL on ${provider}`, async (t) => {
    const world = await startPaidWorld(t, provider);
    const { api, hub, ids, payerKey, sellerId, url } = world;
    const key = hub.apiKey;
    const catchUp = () => hub.proxy.services.catalog.catchUp();

    await t.test('before any route is declared, the documents say so and the listing is incomplete', async (t) => {
      const openapi = (await (await fetch(url('/openapi.json'))).json()) as Json;
      t.same(openapi.paths, {});
      const { body } = await api.get(`/v1/sellers/${sellerId}/discovery`, key);
      t.equal(body.discovery.listing.complete, false);
      t.ok(body.discovery.listing.issues.some((i: Json) => i.code === 'no_routes'));
    });

    const put = await api.put(`/v1/services/${ids.service}/routes`, key, { routes });
    t.equal(put.status, 200, JSON.stringify(put.body));
    await catchUp();

    const openapiReply = await fetch(url('/openapi.json'));
    t.equal(openapiReply.status, 200);
    t.match(openapiReply.headers.get('content-type'), /^application\/json/);
    t.match(openapiReply.headers.get('cache-control'), /max-age=60/);
    const openapi = (await openapiReply.json()) as Json;

    await t.test('the OpenAPI document is valid OpenAPI 3.1', async (t) => {
      const result = await new Validator().validate(openapi);
      t.ok(result.valid, JSON.stringify(result.errors));
      t.equal(openapi.openapi, '3.1.0');
      t.equal(openapi.servers[0].url, new URL(url('/')).origin);
    });

    await t.test('each priced operation has x-payment-info both kinds of crawler read, and a 402', async (t) => {
      const search = openapi.paths['/search'].get;
      const info = search['x-payment-info'];
      const checked = offers.safeParse({ offers: info.offers });
      t.ok(checked.success, checked.error?.message ?? 'the offers parse');
      t.same(info.price, { mode: 'fixed', currency: 'USD', amount: '0.010000' });
      const { x402 } = info.protocols[0];
      t.match(x402, { scheme: 'exact', network: world.rail.network, amount: '10000' });
      t.equal(x402.payTo.toLowerCase(), world.payTo.toLowerCase());
      t.equal(info.offers[0].amount, x402.amount, 'the MPP offer is in the same smallest unit');
      t.ok(search.responses['402']);
      t.same(search.responses['200'].content['application/json'].example, { results: ['a', 'b'] });
      const three = openapi.paths['/three/{kind}'].post;
      t.equal(three['x-payment-info'].price.amount, '0.030000', 'three calls a call');
      t.match(three.parameters, [{ name: 'kind', in: 'path', required: true }]);
    });

    await t.test('llms.txt follows llmstxt.org and names every route with its price and the flows', async (t) => {
      const reply = await fetch(url('/llms.txt'));
      t.equal(reply.status, 200);
      t.match(reply.headers.get('content-type'), /^text\/markdown/);
      const text = await reply.text();
      t.same(llmsTxtProblems(text), []);
      t.match(text, /\[GET \/search\]\(http:\/\/acme\.pay\.localhost:\d+\/search\?q=rain\): Search the index\. 0\.010000 USD a call/);
      t.match(text, /\[POST \/three\/\{kind\}\]/);
      t.match(text, /payment-signature/);
      t.match(text, /Authorization: Payment/);
      t.match(text, /\/agents\/claim/);
    });

    await t.test('an agent that reads only the documents finds the route and its price, and pays with the x402 client', async (t) => {
      const document = (await (await fetch(url('/openapi.json'))).json()) as Json;
      const [path, operations] = Object.entries(document.paths as Json).find(([, ops]) => /search/i.test(ops.get?.summary ?? ''))!;
      const operation = operations.get;
      const query = new URLSearchParams(
        Object.fromEntries((operation.parameters ?? []).filter((p: Json) => p.in === 'query').map((p: Json) => [p.name, p.example])),
      );
      const price = operation['x-payment-info'].price.amount;
      const pay = x402Fetch(payerKey);
      const reply = await pay(`${document.servers[0].url}${path}?${query}`);
      t.equal(reply.status, 200);
      t.match(await reply.json(), { results: ['a', 'b'] });
      t.match(JSON.parse(reply.headers.get('hub-billing') ?? '{}'), { status: 'settled', chargedUsd: price });
    });

    await t.test("a declared route's 402 carries x402's Bazaar extension, which a facilitator reads from the payment", async (t) => {
      const reply = await fetch(url('/search?q=snow'));
      t.equal(reply.status, 402);
      const required = decode(reply.headers.get('payment-required'));
      t.equal(required.resource.description, 'Search the index');
      const bazaar = required.extensions?.bazaar;
      t.ok(validateDiscoveryExtension(bazaar).valid, 'valid by x402’s own schema check');
      t.match(bazaar.info, {
        input: { type: 'http', method: 'GET', queryParams: { q: 'rain' } },
        output: { example: { results: ['a', 'b'] } },
      });
      t.same(((await reply.json()) as Json).extensions, required.extensions, 'the body carries it too');

      const client = new x402Client();
      registerExactEvmScheme(client, { signer: privateKeyToAccount(payerKey) });
      client.setSpendControls({ allowedAssets: true });
      const payment = await client.createPaymentPayload(required as never);
      const found = extractDiscoveryInfo(payment as never, required.accepts[0]);
      t.match(found, { resourceUrl: url('/search'), method: 'GET', x402Version: 2 }, 'listed under the route, its query left out');

      const templated = await fetch(url('/three/daily'), { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
      t.equal(templated.status, 402);
      t.match(decode(templated.headers.get('payment-required')).extensions.bazaar, {
        routeTemplate: '/three/:kind',
        info: { input: { method: 'POST', bodyType: 'json', pathParams: { kind: 'daily' } } },
      });
      const undeclared = await fetch(url('/other'));
      t.equal(undeclared.status, 402);
      t.notOk(decode(undeclared.headers.get('payment-required')).extensions, 'an undeclared route is not described');
    });

    await t.test('a price changed through the management API is in the documents at once', async (t) => {
      const reply = await api.patch(`/v1/plan-meter-prices/pmp_${'s'.repeat(24)}`, key, { priceUsd: '0.02', description: 'per search' });
      t.equal(reply.status, 200);
      t.equal(reply.body.planMeterPrice.description, 'per search');
      await catchUp();
      const document = (await (await fetch(url('/openapi.json'))).json()) as Json;
      const info = document.paths['/search'].get['x-payment-info'];
      t.equal(info.price.amount, '0.020000');
      t.equal(info.offers[0].description, 'per search');
      t.match(await (await fetch(url('/llms.txt'))).text(), /0\.020000 USD a call \(per search\)/);
    });

    await t.test('the seller sees the documents as served, and what its listing lacks', async (t) => {
      const { status, body } = await api.get(`/v1/sellers/${sellerId}/discovery`, key);
      t.equal(status, 200);
      const { payUrl, documents, listing } = body.discovery;
      const servedOrigin = new URL(url('/')).origin;
      const served = JSON.stringify((await (await fetch(url('/openapi.json'))).json()) as Json).replaceAll(servedOrigin, payUrl);
      t.same(documents.openapi.body, JSON.parse(served), 'the OpenAPI document as served, for the pay URL');
      t.equal(documents.openapi.url, `${payUrl}/openapi.json`);
      const text = (await (await fetch(url('/llms.txt'))).text()).replaceAll(servedOrigin, payUrl);
      t.equal(documents.llmsTxt.body, text, 'llms.txt as served');
      t.equal(listing.complete, false);
      t.same(listing.issues.map((i: Json) => `${i.code} ${i.subject ?? ''}`).sort(), [
        'route_description_missing POST /three/{kind}',
        'route_example_incomplete POST /three/{kind}',
        'route_example_missing POST /three/{kind}',
      ]);

      const completed = [
        routes[0],
        { ...routes[1], description: 'Three at once', example: { pathParams: { kind: 'daily' }, body: {}, response: { served: true } } },
      ];
      t.equal((await api.put(`/v1/services/${ids.service}/routes`, key, { routes: completed })).status, 200);
      const after = await api.get(`/v1/sellers/${sellerId}/discovery`, key);
      t.same(after.body.discovery.listing, { complete: true, issues: [] });
    });

    await t.test('bad declarations are refused with the envelope, and nothing changes', async (t) => {
      const before = (await api.get(`/v1/services/${ids.service}/routes`, key)).body.routes;
      const refused = async (body: unknown, status: number, error?: string) => {
        const reply = await api.put(`/v1/services/${ids.service}/routes`, key, body);
        t.equal(reply.status, status, JSON.stringify(body));
        if (error) t.equal(reply.body.error, error);
        t.type(reply.body.error, 'string');
      };
      const one = (route: Json) => ({ routes: [{ method: 'GET', path: '/x', usage: [{ meterSlug: 'calls', quantity: 1 }], ...route }] });
      await refused(one({ path: 'search' }), 400);
      await refused(one({ path: '/a/../b' }), 400);
      await refused(one({ path: '/a/{id}/{id}' }), 400);
      await refused(one({ method: 'TRACE' }), 400);
      await refused(one({ usage: [] }), 400);
      await refused(one({ usage: [{ meterSlug: 'calls', quantity: 0 }] }), 400);
      await refused(one({ example: { response: 'x'.repeat(9000) } }), 400);
      await refused(one({ extra: true }), 400);
      await refused({ routes: [...one({}).routes, ...one({}).routes] }, 400);
      await refused(one({ usage: [{ meterSlug: 'storage', quantity: 1 }] }), 404, 'meter_not_found');
      t.same((await api.get(`/v1/services/${ids.service}/routes`, key)).body.routes, before);
      t.equal((await api.get('/v1/services/svc_000000000000000000000000/routes', key)).body.error, 'service_not_found');
      t.equal((await api.get('/v1/sellers/sel_000000000000000000000000/discovery', key)).body.error, 'seller_not_found');
    });

    await t.test('the documents are the pay URL’s: other methods are refused, and an unknown host has none', async (t) => {
      const post = await fetch(url('/openapi.json'), { method: 'POST', body: '{}' });
      t.equal(post.status, 405);
      t.equal(post.headers.get('allow'), 'GET, HEAD');
      t.match(await post.json(), { error: 'method_not_allowed' });
      const head = await fetch(url('/llms.txt'), { method: 'HEAD' });
      t.equal(head.status, 200);
      const unknown = await fetch(url('/openapi.json').replace('acme.', 'nobody.'));
      t.equal(unknown.status, 404);
      t.match(await unknown.json(), { error: 'seller_not_found' });
    });

    await t.test('a route with examples near their limit still gives a 402 fetch reads and the x402 client pays', async (t) => {
      // Each example just under 8 KiB of JSON: together they would pass undici's 16 KB of headers.
      const fill = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`.padEnd(60, 'k'), 'v'.repeat(500)]));
      const big = { ...routes[0], path: '/big', example: { query: fill(14), response: fill(14) } };
      t.ok(JSON.stringify(big.example.response).length > 7_500);
      const put = await api.put(`/v1/services/${ids.service}/routes`, key, { routes: [big] });
      t.equal(put.status, 200, JSON.stringify(put.body));
      await catchUp();
      const reply = await fetch(url('/big'));
      t.equal(reply.status, 402);
      const header = reply.headers.get('payment-required') ?? '';
      t.ok(header.length <= 8_192, `a header of ${header.length} characters`);
      const required = decode(header);
      t.ok(validateDiscoveryExtension(required.extensions.bazaar).valid, 'the header keeps a valid extension');
      t.notOk(required.extensions.bazaar.info.output, 'without the example');
      const body = (await reply.json()) as Json;
      t.same(body.extensions.bazaar.info.output.example, big.example.response, 'the body keeps the whole extension');
      const paid = await x402Fetch(payerKey)(url('/big'));
      t.equal(paid.status, 200);
    });

    await t.test('"try it": the seller sees the 402 an agent without credentials gets', async (t) => {
      // The control-plane asks its own proxy on loopback (D-001); the test world's proxy is on a port of its own.
      hub.cp.config.proxy.port = Number(new URL(hub.proxyUrl).port);
      const tried = await api.post(`/v1/sellers/${sellerId}/try`, key, { path: '/search?q=rain' });
      t.equal(tried.status, 200, JSON.stringify(tried.body));
      const { answer } = tried.body;
      t.match(answer, {
        status: 402,
        headers: { 'www-authenticate': /^Payment /, 'content-type': /json/ },
        paymentRequired: { x402Version: 2, accepts: [{ scheme: 'exact', amount: /^[1-9][0-9]*$/ }] },
      });
      t.match(JSON.parse(answer.body), { error: 'payment_required', serviceSlug: 'search' });
      t.match(await api.post(`/v1/sellers/${sellerId}/try`, key, { path: 'search' }), { status: 400, body: { error: /^path: / } });
      t.match(await api.post(`/v1/sellers/${sellerId}/try`, key, { path: '/a\u0000b' }), { status: 400 });
      t.match(await api.post(`/v1/sellers/${sellerId}/try`, key, { method: 'DELETE' }), { status: 400, body: { error: /^method: / } });
    });
  });
}
