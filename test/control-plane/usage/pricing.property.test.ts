import fc from 'fast-check';
import t from 'tap';
import { affordable, bill, costItem, mergeItems, type PriceTerms } from '../../../control-plane/usage/pricing.js';

// The cost rules of docs/decisions.md › Usage, as properties of the pure arithmetic that both the
// check and the report use. All amounts are bigint micro-USD.

const MAX_QUANTITY = 2_147_483_647n;
const quantity = fc.bigInt({ min: 0n, max: MAX_QUANTITY });
const terms: fc.Arbitrary<PriceTerms> = fc.record({
  priceMicros: fc.bigInt({ min: 0n, max: 10_000_000n }),
  unitSize: fc.bigInt({ min: 1n, max: 1_000_000n }),
  includedUnits: fc.bigInt({ min: 0n, max: MAX_QUANTITY }),
});

t.test('rule 1: included units first, never more than are left, never more than asked', async (t) => {
  fc.assert(
    fc.property(quantity, terms, quantity, (q, price, used) => {
      const { includedUnits } = costItem(q, price, used);
      const left = price.includedUnits > used ? price.includedUnits - used : 0n;
      return includedUnits >= 0n && includedUnits <= q && includedUnits <= left && (includedUnits === q || includedUnits === left);
    }),
  );
  t.pass('holds');
});

t.test('rule 2: the rest costs the price of every started unit block, exactly', async (t) => {
  fc.assert(
    fc.property(quantity, terms, quantity, (q, price, used) => {
      const { includedUnits, costMicros } = costItem(q, price, used);
      const billed = q - includedUnits;
      if (price.priceMicros === 0n) return costMicros === 0n;
      // A whole number of blocks: enough to hold every billed unit, and not one block more.
      if (costMicros % price.priceMicros !== 0n) return false;
      const blocks = costMicros / price.priceMicros;
      return billed === 0n ? blocks === 0n : blocks * price.unitSize >= billed && (blocks - 1n) * price.unitSize < billed;
    }),
  );
  t.equal(
    costItem(3n, { priceMicros: 10_000n, unitSize: 10n, includedUnits: 0n }, 0n).costMicros,
    10_000n,
    '3 calls at $0.01 per 10 cost $0.01',
  );
  t.equal(
    costItem(1_001n, { priceMicros: 2_000n, unitSize: 1_000n, includedUnits: 0n }, 0n).costMicros,
    4_000n,
    '1,001 tokens are two blocks',
  );
  t.equal(costItem(12n, { priceMicros: 1_000n, unitSize: 1n, includedUnits: 10n }, 0n).costMicros, 2_000n, 'two beyond the ten included');
});

t.test('costs never fall when more is used, and never rise when more is included', async (t) => {
  fc.assert(
    fc.property(quantity, quantity, terms, quantity, (a, b, price, used) => {
      const [less, more] = a <= b ? [a, b] : [b, a];
      const moreIncluded = { ...price, includedUnits: price.includedUnits + 1n };
      return (
        costItem(less, price, used).costMicros <= costItem(more, price, used).costMicros &&
        costItem(more, moreIncluded, used).costMicros <= costItem(more, price, used).costMicros
      );
    }),
  );
  t.pass('holds');
});

t.test('rule 3: a sequence of draws against one access never overspends credit or included units', async (t) => {
  fc.assert(
    fc.property(
      terms,
      fc.bigInt({ min: 0n, max: 100_000_000n }),
      fc.boolean(),
      fc.array(fc.bigInt({ min: 0n, max: 100_000n }), { maxLength: 40 }),
      (price, granted, hasCredit, draws) => {
        let balance = hasCredit ? granted : 0n;
        let used = 0n;
        let spent = 0n;
        for (const q of draws) {
          const priced = bill([{ quantity: q, terms: price, includedUsed: used }]);
          if (!affordable(priced, hasCredit ? balance : null)) continue;
          balance -= priced.costMicros;
          spent += priced.costMicros;
          used += priced.items[0]!.includedUnits;
          if (balance < 0n || used > price.includedUnits) return false;
        }
        return hasCredit ? spent + balance === granted : spent === 0n;
      },
    ),
  );
  t.pass('holds');
});

t.test('rule 2: credit units pay unit for unit after included units, within the pool, only where a unit costs', async (t) => {
  const pool = fc.record({ granted: fc.bigInt({ min: 0n, max: 1_000_000n }), used: fc.bigInt({ min: 0n, max: 1_000_000n }) });
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.bigInt({ min: 0n, max: 500_000n }), terms, quantity), { maxLength: 8 }), pool, (rows, p) => {
      const items = rows.map(([q, price, used]) => ({ quantity: q, terms: price, includedUsed: used }));
      const priced = bill(items, p);
      const left = p.granted > p.used ? p.granted - p.used : 0n;
      const withoutPool = bill(items);
      return (
        priced.creditUnits === priced.items.reduce((s, i) => s + i.creditUnits, 0n) &&
        priced.creditUnits <= left &&
        priced.items.every((item, i) => {
          const alone = withoutPool.items[i]!;
          return (
            item.includedUnits === alone.includedUnits &&
            item.creditUnits >= 0n &&
            item.includedUnits + item.creditUnits <= item.quantity &&
            (item.terms.priceMicros > 0n || item.creditUnits === 0n) &&
            item.costMicros === costItem(item.quantity - item.creditUnits, item.terms, item.includedUsed).costMicros &&
            item.costMicros <= alone.costMicros
          );
        }) &&
        // The pool is used up before anything priced is paid for in money.
        (priced.creditUnits === left ||
          priced.items.every((item) => item.terms.priceMicros === 0n || item.includedUnits + item.creditUnits === item.quantity))
      );
    }),
  );
  const perCall = { priceMicros: 1_000n, unitSize: 1n, includedUnits: 2n };
  t.match(
    bill(
      [
        { quantity: 5n, terms: perCall, includedUsed: 0n },
        { quantity: 4n, terms: { priceMicros: 0n, unitSize: 1n, includedUnits: 0n }, includedUsed: 0n },
        { quantity: 3n, terms: perCall, includedUsed: 2n },
      ],
      { granted: 4n, used: 0n },
    ),
    {
      creditUnits: 4n,
      costMicros: 2_000n,
      items: [
        { includedUnits: 2n, creditUnits: 3n },
        { creditUnits: 0n, costMicros: 0n },
        { includedUnits: 0n, creditUnits: 1n },
      ],
    },
    'two included, three from the pool; the free meter takes none; the last unit of the pool, then two paid',
  );
});

t.test('rule 3 with credit units: a period of draws never takes more units than the pool grants', async (t) => {
  fc.assert(
    fc.property(
      terms,
      fc.bigInt({ min: 0n, max: 10_000n }),
      fc.bigInt({ min: 0n, max: 100_000_000n }),
      fc.array(fc.bigInt({ min: 0n, max: 5_000n }), { maxLength: 40 }),
      (price, granted, credit, draws) => {
        let balance = credit;
        let included = 0n;
        let units = 0n;
        for (const q of draws) {
          const priced = bill([{ quantity: q, terms: price, includedUsed: included }], { granted, used: units });
          if (!affordable(priced, balance)) continue;
          balance -= priced.costMicros;
          included += priced.items[0]!.includedUnits;
          units += priced.creditUnits;
          if (balance < 0n || units > granted || included > price.includedUnits) return false;
        }
        return true;
      },
    ),
  );
  t.pass('holds');
});

t.test('a bill is the sum of its items; items of one meter merge into their sum', async (t) => {
  const item = fc.record({ meterSlug: fc.constantFrom('a', 'b', 'c'), quantity: fc.bigInt({ min: 0n, max: 1_000_000n }) });
  fc.assert(
    fc.property(fc.array(item, { maxLength: 20 }), (items) => {
      const merged = mergeItems(items);
      const total = (list: typeof items, slug: string) => list.filter((i) => i.meterSlug === slug).reduce((s, i) => s + i.quantity, 0n);
      return (
        new Set(merged.map((i) => i.meterSlug)).size === merged.length &&
        ['a', 'b', 'c'].every((slug) => total(items, slug) === total(merged, slug))
      );
    }),
  );
  fc.assert(
    fc.property(fc.array(fc.tuple(quantity, terms, quantity), { maxLength: 10 }), (rows) => {
      const priced = bill(rows.map(([q, price, used]) => ({ quantity: q, terms: price, includedUsed: used })));
      return priced.costMicros === priced.items.reduce((s, i) => s + i.costMicros, 0n);
    }),
  );
  t.pass('holds');
});

t.test('free mode: allowed only when included units cover everything that has a price', async (t) => {
  fc.assert(
    fc.property(quantity, terms, quantity, (q, price, used) => {
      const priced = bill([{ quantity: q, terms: price, includedUsed: used }]);
      const covered = priced.items[0]!.includedUnits === q;
      return affordable(priced, null) === (covered || price.priceMicros === 0n);
    }),
  );
  t.pass('holds');
});
