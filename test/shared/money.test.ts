import fc from 'fast-check';
import t from 'tap';
import {
  costOf,
  formatUsd,
  isWholeCents,
  MAX_MICROS,
  microsToTokenUnits,
  mulDivCeil,
  parseUsd,
  sumMicros,
  tokenUnitsToMicros,
  usdToMicros,
} from '../../shared/money.js';

t.test('parses six-decimal USD strings to micro-USD exactly', async (t) => {
  t.equal(usdToMicros('0'), 0n);
  t.equal(usdToMicros('1'), 1_000_000n);
  t.equal(usdToMicros('1.5'), 1_500_000n);
  t.equal(usdToMicros('0.000001'), 1n);
  t.equal(usdToMicros('0.10'), 100_000n);
  t.equal(usdToMicros('999999999999.999999'), MAX_MICROS);
});

t.test('refuses what is not a plain non-negative decimal', async (t) => {
  for (const bad of ['', ' 1', '1 ', '-1', '+1', '1e3', '1.', '.5', '01', '1.0000001', '0x10', 'NaN', '1,5', '1000000000000', '١']) {
    t.notOk(parseUsd(bad).ok, `refuses ${JSON.stringify(bad)}`);
  }
  for (const bad of [1, null, undefined, {}, 1n]) t.notOk(parseUsd(bad).ok, `refuses ${String(bad)}`);
  const r = parseUsd('1.0000001');
  t.match(r, { ok: false, reason: /six decimal/ });
});

t.test('formats with exactly six decimals', async (t) => {
  t.equal(formatUsd(0n), '0.000000');
  t.equal(formatUsd(1n), '0.000001');
  t.equal(formatUsd(1_500_000n), '1.500000');
  t.equal(formatUsd(-1n), '-0.000001');
  t.equal(formatUsd(MAX_MICROS), '999999999999.999999');
});

t.test('format and parse are inverse (property)', async (t) => {
  fc.assert(fc.property(fc.bigInt({ min: 0n, max: MAX_MICROS }), (micros) => usdToMicros(formatUsd(micros)) === micros));
  t.pass('round-trips');
});

t.test('whole cents', async (t) => {
  t.ok(isWholeCents(usdToMicros('0.01')));
  t.ok(isWholeCents(usdToMicros('12.30')));
  t.notOk(isWholeCents(usdToMicros('0.015')));
  t.notOk(isWholeCents(1n));
});

t.test('costs round up to whole unit blocks and never go below the exact price (property)', async (t) => {
  t.equal(costOf(3n, 10_000n, 10n), 10_000n, '3 calls at $0.01 per 10 cost one block');
  t.equal(costOf(10n, 10_000n, 10n), 10_000n);
  t.equal(costOf(11n, 10_000n, 10n), 20_000n);
  t.equal(costOf(0n, 10_000n, 10n), 0n);
  fc.assert(
    fc.property(
      fc.bigInt({ min: 0n, max: 2_147_483_647n }),
      fc.bigInt({ min: 0n, max: 10_000_000n }),
      fc.bigInt({ min: 1n, max: 1_000_000n }),
      (q, price, unit) => {
        const cost = costOf(q, price, unit);
        // exact cost is q*price/unit; ours is at least that and less than one block more
        return cost * unit >= q * price && (cost - price) * unit < q * price + (price === 0n ? 1n : 0n) * unit;
      },
    ),
  );
  t.equal(costOf(2_147_483_647n, MAX_MICROS, 1n), MAX_MICROS, 'at most the largest amount hub represents');
  t.equal(sumMicros([MAX_MICROS, MAX_MICROS, 1n]), MAX_MICROS);
  t.equal(sumMicros([1n, 2n]), 3n);
  t.equal(sumMicros([]), 0n);
  t.equal(mulDivCeil(7n, 3n, 2n), 11n);
  t.throws(() => mulDivCeil(1n, 1n, 0n));
});

t.test('token units: identity at six decimals, scaled otherwise, payer covers rounding', async (t) => {
  t.equal(microsToTokenUnits(1_234_567n, 6), 1_234_567n);
  t.equal(microsToTokenUnits(1n, 18), 1_000_000_000_000n);
  t.equal(microsToTokenUnits(1n, 2), 1n, 'rounds up below six decimals');
  t.equal(tokenUnitsToMicros(1_000_000_000_001n, 18), 1n, 'rounds down what was received');
  t.equal(tokenUnitsToMicros(5n, 2), 50_000n);
});
