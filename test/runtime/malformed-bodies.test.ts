import t from 'tap';
import { testProviders } from '../helpers/database.js';
import { startTestHub } from '../helpers/hub.js';
import { sellerBehind, startTestUpstream } from '../helpers/upstream.js';

// A body that is not JSON gets the same envelope on every route of both ports: `error` is the
// code `invalid_request` (a code from the table, never a message), the message is in `reason`.
// The control-plane's routes come from its own OpenAPI document, so a route added later is
// walked too.

const MALFORMED = ['{"name":', '[1,2]', 'null', '{"a":1}}'];

type Operation = { requestBody?: unknown };
type Document = { paths: Record<string, Record<string, Operation>> };

for (const provider of testProviders()) {
  t.test(provider, async (t) => {
    const hub = await startTestHub(t, provider);
    const upstream = await startTestUpstream(t);
    await sellerBehind(hub, upstream);
    const { sessionToken } = await hub.cp.bootstrap('second-admin@example.com');
    const agent = await hub.agent({ buyer: true });

    await t.test('every control-plane route that takes a body', async (t) => {
      const document = (await (await fetch(`${hub.cp.url}/v1/openapi.json`)).json()) as Document;
      const routes = Object.entries(document.paths).flatMap(([path, operations]) =>
        Object.entries(operations)
          .filter(([, operation]) => operation.requestBody !== undefined)
          .map(([method, _]) => ({ method: method.toUpperCase(), path: `${path.replace(/\{[^}]+\}/g, 'x')}` })),
      );
      t.ok(routes.length >= 20, `${routes.length} routes take a body`);
      for (const route of routes) {
        for (const body of MALFORMED) {
          const answers = [];
          // The route's own kind of credential reads the body; the others are refused before it.
          for (const token of [hub.apiKey, sessionToken]) {
            const res = await fetch(`${hub.cp.url}${route.path}`, {
              method: route.method,
              headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
              body,
            });
            answers.push({ status: res.status, body: (await res.json()) as { error: string; reason?: string } });
          }
          const read = answers.filter((a) => a.status === 400);
          const label = `${route.method} ${route.path} ${body}`;
          t.ok(read.length > 0, `${label}: a credential that reaches the body gets 400`);
          for (const answer of read)
            t.match(answer.body, { error: 'invalid_request', reason: /JSON/ }, `${label}: the code, the message as reason`);
          t.notOk(
            answers.some((a) => a.status >= 500),
            `${label}: never a 5xx`,
          );
        }
      }
    });

    await t.test('every pay URL route that reads JSON', async (t) => {
      const routes: [string, Record<string, string>][] = [
        ['/agents/challenge', {}],
        ['/agents/register', {}],
        ['/agents/claim', { authorization: `Bearer ${agent.token}` }],
        ['/extend', { authorization: `Bearer ${agent.token}` }],
        ['/keys/redeem', { authorization: `Bearer ${agent.token}` }],
      ];
      for (const [path, headers] of routes) {
        for (const body of MALFORMED) {
          const res = await hub.pay('acme', path, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
          t.equal(res.status, 400, `POST ${path} ${body}: 400`);
          t.match(await res.json(), { error: 'invalid_request', reason: /JSON/ }, `POST ${path} ${body}: the code, the message as reason`);
        }
      }
      t.equal(upstream.seen.length, 0, 'none reached the seller');
    });
  });
}
