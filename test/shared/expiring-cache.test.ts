import t from 'tap';
import { ExpiringCache } from '../../shared/expiring-cache.js';

t.test('entries live for their time to live, a cached null is a hit', async (t) => {
  const cache = new ExpiringCache<string, string | null>({ ttlMs: 100, maxEntries: 10 });
  cache.set('a', 'A', undefined, 1_000);
  cache.set('none', null, 50, 1_000);
  t.equal(cache.get('a', 1_099), 'A');
  t.equal(cache.get('a', 1_100), undefined, 'expired at its deadline');
  t.equal(cache.get('none', 1_010), null, 'null is remembered');
  t.equal(cache.get('none', 1_050), undefined, 'with its own time to live');
  t.equal(cache.get('missing'), undefined);
});

t.test('past its bound the cache starts over; a rewrite of a held key does not', async (t) => {
  const cache = new ExpiringCache<number, number>({ ttlMs: 1_000, maxEntries: 3 });
  for (const n of [1, 2, 3]) cache.set(n, n);
  cache.set(3, 30);
  t.equal(cache.size, 3);
  cache.set(4, 4);
  t.equal(cache.size, 1);
  t.equal(cache.get(4), 4);
});

t.test('deleteWhere drops matching entries', async (t) => {
  const cache = new ExpiringCache<string, { seller: string }>({ ttlMs: 1_000, maxEntries: 10 });
  cache.set('a.example', { seller: 's1' });
  cache.set('b.example', { seller: 's1' });
  cache.set('c.example', { seller: 's2' });
  cache.deleteWhere((v) => v.seller === 's1');
  t.same([cache.get('a.example'), cache.get('b.example'), cache.get('c.example')], [undefined, undefined, { seller: 's2' }]);
});
