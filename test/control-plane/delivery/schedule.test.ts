import t from 'tap';
import { backoffMs, DELIVERY_SCHEDULE, exhausted, hintMs } from '../../../control-plane/delivery/schedule.js';

// The real schedule's numbers (spec: Limits): tests elsewhere run a shortened one.

t.test('the spec’s limits', async (t) => {
  t.match(DELIVERY_SCHEDULE, {
    firstBackoffMs: 30_000,
    maxBackoffMs: 1_800_000,
    maxHintMs: 1_800_000,
    maxAttempts: 20,
    giveUpAfterMs: 86_400_000,
    budgetMs: 7_000,
  });
});

t.test('backoff: from 30 s, doubling, jittered within the step, never above 30 min', async (t) => {
  const low = () => 0;
  const high = () => 1;
  t.same(
    [1, 2, 3, 4, 5, 6, 7, 20].map((n) => backoffMs(DELIVERY_SCHEDULE, n, high)),
    [30_000, 60_000, 120_000, 240_000, 480_000, 960_000, 1_800_000, 1_800_000],
  );
  t.same(
    [1, 2, 7].map((n) => backoffMs(DELIVERY_SCHEDULE, n, low)),
    [15_000, 30_000, 900_000],
    'at least half the step',
  );
});

t.test('hints: seconds or an HTTP date, capped at 30 min; anything else is no hint', async (t) => {
  t.equal(hintMs(DELIVERY_SCHEDULE, 12), 12_000);
  t.equal(hintMs(DELIVERY_SCHEDULE, '120'), 120_000);
  t.equal(hintMs(DELIVERY_SCHEDULE, 86_400), 1_800_000);
  const now = Date.parse('2026-11-25T00:00:00Z');
  t.equal(hintMs(DELIVERY_SCHEDULE, 'Wed, 25 Nov 2026 00:01:00 GMT', now), 60_000);
  t.equal(hintMs(DELIVERY_SCHEDULE, 'Tue, 24 Nov 2026 00:00:00 GMT', now), 0, 'a date past is now');
  for (const bad of [-1, 'soon', '', null, undefined, Number.NaN, '1e9', {}])
    t.equal(hintMs(DELIVERY_SCHEDULE, bad), undefined, String(bad));
});

t.test('giving up: 20 attempts or 24 hours, whichever first', async (t) => {
  const start = new Date('2026-11-25T00:00:00Z');
  t.notOk(exhausted(DELIVERY_SCHEDULE, 19, start, new Date(start.getTime() + 3_600_000)));
  t.ok(exhausted(DELIVERY_SCHEDULE, 20, start, new Date(start.getTime() + 60_000)));
  t.ok(exhausted(DELIVERY_SCHEDULE, 3, start, new Date(start.getTime() + 86_400_000)));
});
