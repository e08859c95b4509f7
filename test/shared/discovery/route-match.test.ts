import t from 'tap';
import type { DiscoveryCatalog } from '../../../shared/contract.js';
import { matchRoute, pathParamsOf } from '../../../shared/discovery/route-match.js';
import { routes } from '../../../shared/schemas/routes.js';

type Entry = DiscoveryCatalog['routes'][number];
const entry = (method: 'GET' | 'POST', path: string): Entry => ({
  serviceSlug: 'forecast',
  route: { method, path, usage: [{ meterSlug: 'calls', quantity: 1 }] },
  price: null,
});

t.test('a call matches its declared route by method and path, a literal segment before a parameter', async (t) => {
  const declared = [entry('GET', '/forecast/{city}'), entry('GET', '/forecast/today'), entry('POST', '/forecast/{city}')];
  t.equal(matchRoute(declared, 'GET', '/forecast/today'), declared[1]);
  t.equal(matchRoute(declared, 'GET', '/forecast/lisbon'), declared[0]);
  t.equal(matchRoute(declared, 'POST', '/forecast/lisbon'), declared[2]);
  t.equal(matchRoute(declared, 'GET', '/forecast'), undefined, 'fewer segments');
  t.equal(matchRoute(declared, 'GET', '/forecast/'), undefined, 'an empty parameter');
  t.equal(matchRoute(declared, 'GET', '/forecast/lisbon/extra'), undefined, 'more segments');
  t.equal(matchRoute(declared, 'PUT', '/forecast/lisbon'), undefined, 'another method');
  t.same(pathParamsOf('/forecast/{city}', '/forecast/S%C3%A3o%20Paulo'), { city: 'São Paulo' });
  t.same(pathParamsOf('/forecast/{city}', '/forecast/%E0%A4%A'), { city: '%E0%A4%A' }, 'a bad escape is kept as sent');
});

t.test('route declarations: templates, methods and lists hub refuses', async (t) => {
  const one = (route: Record<string, unknown>) =>
    routes.safeParse([{ method: 'GET', path: '/x', usage: [{ meterSlug: 'calls', quantity: 1 }], ...route }]);
  t.ok(one({ path: '/' }).success);
  t.ok(one({ path: '/forecast/{city}/days/{n}' }).success);
  for (const path of ['', 'x', '/a//b', '/a/../b', '/a/{b', '/a/{1b}', '/a/x{b}', '/a b', '/a?q=1', '/a#f', '/a/{b}/{b}'])
    t.notOk(one({ path }).success, `path ${JSON.stringify(path)}`);
  t.notOk(one({ method: 'get' }).success, 'methods are upper case');
  t.notOk(
    one({
      usage: [
        { meterSlug: 'calls', quantity: 1 },
        { meterSlug: 'calls', quantity: 2 },
      ],
    }).success,
    'a meter twice',
  );
  t.notOk(one({ example: { body: { big: 'x'.repeat(9000) } } }).success, 'an example over 8 KiB');
  t.notOk(
    routes.safeParse(Array.from({ length: 101 }, (_, i) => ({ method: 'GET', path: `/r${i}`, usage: [{ meterSlug: 'c', quantity: 1 }] })))
      .success,
  );
});
