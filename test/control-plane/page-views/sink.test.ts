import pino from 'pino';
import t from 'tap';
import { type PageViewRow, PageViewSink } from '../../../control-plane/page-views/sink.js';

// The page-view write buffer under faults (its writer fails on demand):
// an accepted view is written once the database is back, and memory stays within its bound.

const row = (n: number): PageViewRow => ({
  id: `pv_${String(n).padStart(24, '0')}`,
  organizationId: 'org_1',
  sellerId: 'sel_1',
  path: `/${n}`,
  status: null,
  durationMs: null,
  capturedAt: null,
  journeyId: null,
  viewerId: 'v',
  viewerClass: 'unknown',
  acceptsMarkdown: false,
  country: null,
  referrerHost: null,
  createdAt: new Date(),
});

function flakyWriter() {
  const written: PageViewRow[] = [];
  let failing = true;
  const write = async (rows: PageViewRow[]) => {
    if (failing) throw new Error('database unavailable');
    written.push(...rows);
  };
  return { write, written, recover: () => (failing = false) };
}

t.test('views accepted while the database is down are written once it is back', async (t) => {
  const { write, written, recover } = flakyWriter();
  const sink = new PageViewSink(write, pino({ level: 'silent' }), { flushMs: 5, batch: 10, maxBuffered: 1_000 });
  for (let i = 0; i < 25; i++) t.ok(sink.accept(row(i)));
  await sink.drain(2);
  t.equal(written.length, 0);
  t.equal(sink.waiting, 25, 'nothing lost while it fails');
  recover();
  await sink.drain();
  t.equal(written.length, 25);
  t.same(
    written.map((r) => r.path),
    Array.from({ length: 25 }, (_, i) => `/${i}`),
    'in the order they came',
  );
});

t.test('past the bound, new views are dropped and counted, never queued without limit', async (t) => {
  const { write, written, recover } = flakyWriter();
  const sink = new PageViewSink(write, pino({ level: 'silent' }), { flushMs: 60_000, batch: 10, maxBuffered: 20 });
  const accepted = Array.from({ length: 30 }, (_, i) => sink.accept(row(i))).filter(Boolean).length;
  t.equal(accepted, 20);
  t.equal(sink.dropped, 10);
  t.equal(sink.waiting, 20);
  recover();
  await sink.drain();
  t.equal(written.length, 20);
});

t.test('a row the database refuses while it answers is dropped alone, not retried for ever', async (t) => {
  const written: PageViewRow[] = [];
  let up = true;
  const refuses = (r: PageViewRow) => r.path === '/3' || r.path === '/17';
  const write = async (rows: PageViewRow[]) => {
    if (!up) throw new Error('database unavailable');
    if (rows.some(refuses)) throw new Error('value out of range');
    written.push(...rows);
  };
  const sink = new PageViewSink(write, pino({ level: 'silent' }), { flushMs: 5, batch: 20, maxBuffered: 1_000 }, async () => up);
  for (let i = 0; i < 25; i++) sink.accept(row(i));
  await sink.drain(3);
  t.equal(sink.waiting, 0);
  t.same(
    written.map((r) => r.path).sort(),
    Array.from({ length: 25 }, (_, i) => `/${i}`)
      .filter((p) => p !== '/3' && p !== '/17')
      .sort(),
  );

  // Down, nothing is dropped: every view waits, refused or not.
  up = false;
  written.length = 0;
  for (let i = 0; i < 5; i++) sink.accept(row(i));
  await sink.drain(2);
  t.equal(sink.waiting, 5);
  up = true;
  await sink.drain(2);
  t.same(written.map((r) => r.path).sort(), ['/0', '/1', '/2', '/4']);

  // Every row refused though the database answers (a broken table, say): none is dropped.
  const broken = new PageViewSink(
    async () => Promise.reject(new Error('no such table')),
    pino({ level: 'silent' }),
    undefined,
    async () => true,
  );
  for (let i = 0; i < 4; i++) broken.accept(row(i));
  await broken.drain(2);
  t.equal(broken.waiting, 4);
});
