import fc from 'fast-check';
import t from 'tap';
import { type Account, type AccountWrite, applyAccountWrite, parseAccountWrite, parseMintRequest, spendCredit } from '../../sdk/index.js';
import { MAX_MICROS } from '../../shared/money.js';
import { ids, laterWrite, originalWrite } from '../helpers/account-fixtures.js';

// spec: Account write handling rules 1–4. Writes describe how the account should look; applying
// the newest version seen always leaves the account correct; money in integer micro-USD.

const { accessId, agentId } = ids();
const AT = new Date('2026-01-15T00:00:00Z');

function parsed(body: Record<string, unknown>): AccountWrite {
  const r = parseAccountWrite(body);
  if (!r.ok) throw new Error(r.message);
  return r.value;
}

/** A history of one account as hub would send it: totals only rise, reversals never exceed grants. */
const history = fc
  .array(
    fc.record({
      grant: fc.bigInt({ min: 0n, max: 10n ** 13n }),
      reverse: fc.bigInt({ min: 0n, max: 10n ** 13n }),
      status: fc.constantFrom('active' as const, 'suspended' as const),
      renew: fc.boolean(),
    }),
    { minLength: 1, maxLength: 10 },
  )
  .map((steps) => {
    let granted = 0n;
    let reversed = 0n;
    let month = 1;
    return steps.map((s, i) => {
      granted += s.grant;
      reversed = reversed + s.reverse > granted ? granted : reversed + s.reverse;
      if (s.renew) month++;
      const periodStart = `2026-${String(((month - 1) % 12) + 1).padStart(2, '0')}-01T00:00:00Z`;
      return parsed(originalWrite({ accessId, agentId, stateVersion: i + 1, granted, reversed, status: s.status, periodStart }));
    });
  });

/** Every write delivered at least once, some again, in any order. */
const deliveries = history.chain((writes) =>
  fc.array(fc.nat(writes.length - 1), { maxLength: 15 }).chain((extra) => {
    const all = [...writes.keys(), ...extra];
    return fc.array(fc.nat(), { minLength: all.length, maxLength: all.length }).map((keys) => ({
      writes,
      order: all
        .map((w, i) => ({ w, k: keys[i]! }))
        .sort((a, b) => a.k - b.k)
        .map((x) => x.w),
    }));
  }),
);

function deliverAll(writes: AccountWrite[], order: number[]): Account {
  let account: Account | undefined;
  for (const i of order) account = applyAccountWrite(account, writes[i]!, AT).account;
  return account!;
}

t.test('any order, any repetition: the same account as applying the newest write once', async (t) => {
  fc.assert(
    fc.property(deliveries, ({ writes, order }) => {
      const delivered = deliverAll(writes, order);
      const newestOnce = applyAccountWrite(undefined, writes.at(-1)!, AT).account;
      // Counters may differ only by what the seller counted, and nobody counted here.
      return (
        fc.stringify(delivered) === fc.stringify(newestOnce) &&
        delivered.balanceMicros === newestOnce.creditGrantedMicros - newestOnce.creditReversedMicros
      );
    }),
    { numRuns: 500 },
  );
  t.pass('holds');
});

t.test('the balance never goes negative, whatever arrives and whatever is spent', async (t) => {
  // Here totals may even fall and reversals exceed grants: hostile input, not hub's.
  const step = fc.oneof(
    fc.record({
      kind: fc.constant('write' as const),
      version: fc.integer({ min: 0, max: 20 }),
      granted: fc.option(fc.bigInt({ min: 0n, max: MAX_MICROS }), { nil: null }),
      reversed: fc.bigInt({ min: 0n, max: MAX_MICROS }),
    }),
    fc.record({ kind: fc.constant('spend' as const), micros: fc.bigInt({ min: 0n, max: MAX_MICROS }) }),
  );
  fc.assert(
    fc.property(fc.array(step, { minLength: 1, maxLength: 25 }), (steps) => {
      let account: Account | undefined;
      for (const s of steps) {
        if (s.kind === 'write')
          account = applyAccountWrite(
            account,
            parsed(originalWrite({ accessId, agentId, stateVersion: s.version, granted: s.granted, reversed: s.reversed })),
            AT,
          ).account;
        else if (account) account = spendCredit(account, s.micros).account;
        if (account && (typeof account.balanceMicros !== 'bigint' || account.balanceMicros < 0n)) return false;
      }
      return true;
    }),
    { numRuns: 500 },
  );
  t.pass('holds');
});

t.test('money never passes through a float: amounts past 2^53 micro-USD net exactly', async (t) => {
  const big = fc.bigInt({ min: 2n ** 53n, max: MAX_MICROS });
  fc.assert(
    fc.property(big, big, fc.bigInt({ min: 1n, max: 999n }), (a, b, c) => {
      const [low, high] = a < b ? [a, b] : [b, a];
      const first = applyAccountWrite(
        undefined,
        parsed(laterWrite({ accessId, agentId, stateVersion: 1, granted: high, reversed: low, buyerId: null, buyerEmail: null })),
        AT,
      ).account;
      const second = applyAccountWrite(
        first,
        parsed(originalWrite({ accessId, agentId, stateVersion: 2, granted: high, reversed: low + (high - low > c ? c : 0n) })),
        AT,
      ).account;
      return first.balanceMicros === high - low && second.balanceMicros === high - low - (high - low > c ? c : 0n);
    }),
  );
  // The float path would be visible here: 9007199254.740993 USD is not a double.
  const odd = parsed(originalWrite({ accessId, agentId, stateVersion: 1, granted: 9_007_199_254_740_993n, reversed: 0n }));
  t.equal(applyAccountWrite(undefined, odd, AT).account.balanceMicros, 9_007_199_254_740_993n);
});

t.test('each outcome, by example', async (t) => {
  const w = (v: number, granted: bigint | null, reversed?: bigint) =>
    parsed(originalWrite({ accessId, agentId, stateVersion: v, granted, reversed }));
  const first = applyAccountWrite(undefined, w(1, 5_000_000n, 0n), AT);
  t.match(first, { outcome: 'credit', account: { balanceMicros: 5_000_000n } });
  t.match(
    applyAccountWrite(first.account, w(1, 9_000_000n, 0n), AT),
    { outcome: 'replay', account: { balanceMicros: 5_000_000n } },
    'same version with other numbers is still a replay',
  );
  t.match(applyAccountWrite(first.account, w(0, 9_000_000n, 0n), AT), { outcome: 'replay' });
  t.match(applyAccountWrite(first.account, w(2, 5_000_000n, 7_000_000n), AT), { outcome: 'debit', account: { balanceMicros: 0n } });
  t.match(applyAccountWrite(first.account, w(2, null, 0n), AT), { outcome: 'no_credit_dimension', account: { balanceMicros: 5_000_000n } });
  t.match(
    applyAccountWrite(first.account, w(2, 5_000_000n, 0n), AT),
    { outcome: 'credit', account: { balanceMicros: 5_000_000n } },
    'no change nets to a zero credit',
  );
});

t.test('the body parsers are total: any JSON value gives a result, never an exception', async (t) => {
  const json = fc.jsonValue();
  const nearWrite = fc.record(
    {
      accessId: fc.oneof(fc.constant(accessId), fc.string()),
      agent: fc.oneof(fc.constant(agentId), fc.jsonValue()),
      stateVersion: fc.jsonValue(),
      plan: fc.jsonValue(),
      state: fc.jsonValue(),
    },
    { requiredKeys: [] },
  );
  fc.assert(
    fc.property(fc.oneof(json, nearWrite), (body) => {
      const w = parseAccountWrite(body);
      const m = parseMintRequest(body);
      return (w.ok || typeof w.message === 'string') && (m.ok || typeof m.message === 'string');
    }),
    { numRuns: 2000 },
  );
  t.same(parseAccountWrite(JSON.parse('{"__proto__":{"agent":"x"}}')), {
    ok: false,
    message: 'the account write body must name its agent in exactly one of agent or agentId',
  });
});
