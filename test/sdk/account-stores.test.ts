import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import t from 'tap';
import {
  type Account,
  type AccountStore,
  type AccountWrite,
  accountsFor,
  applyAccountWrite,
  MemoryAccountStore,
  parseAccountWrite,
} from '../../sdk/index.js';
import { SqliteAccountStore } from '../../sdk/sqlite.js';
import { newId } from '../../shared/ids.js';
import { ids, laterWrite, originalWrite } from '../helpers/account-fixtures.js';

// The store contract (sdk/account/store.ts) for both implementations; the buyer-id release rule of
// spec: Headers on proxied requests › Identity combinations.

const dir = mkdtempSync(join(tmpdir(), 'hub-sdk-store-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

const stores: Record<string, () => AccountStore> = {
  memory: () => new MemoryAccountStore(),
  sqlite: () => new SqliteAccountStore(join(dir, `accounts-${++files}.db`)),
};

function write(body: Record<string, unknown>): AccountWrite {
  const r = parseAccountWrite(body);
  if (!r.ok) throw new Error(r.message);
  return r.value;
}
const apply = (store: AccountStore, w: AccountWrite) =>
  store.update(w.accessId, (current) => {
    const applied = applyAccountWrite(current, w);
    return { account: applied.outcome === 'replay' ? undefined : applied.account, result: applied.outcome };
  });
const withBalance = (a: Account, balanceMicros: bigint): Account => ({ ...a, balanceMicros });

for (const [name, open] of Object.entries(stores)) {
  t.test(name, async (t) => {
    const store = open();
    t.teardown(() => store.close());

    t.test('update creates, changes and reports; get returns a copy', async (t) => {
      const { accessId, agentId } = ids();
      t.equal(await store.get(accessId), undefined);
      t.equal(
        await apply(store, write(originalWrite({ accessId, agentId, stateVersion: 1, granted: 999_999_999_999_999_999n, reversed: 0n }))),
        'credit',
      );
      const a = (await store.get(accessId))!;
      t.equal(a.balanceMicros, 999_999_999_999_999_999n, 'the largest amount round-trips exactly');
      t.match(a, {
        accessId,
        agentId,
        stateVersion: 1,
        hasCredit: true,
        plan: { slug: 'pro', basePriceMicros: 10_000_000n, billingMode: 'credit' },
        periodUsage: {},
      });
      a.balanceMicros = 0n;
      a.periodUsage.calls = 5;
      t.equal((await store.get(accessId))!.balanceMicros, 999_999_999_999_999_999n, 'changing a returned account changes nothing stored');
      t.same((await store.get(accessId))!.periodUsage, {});
      t.equal(await apply(store, write(originalWrite({ accessId, agentId, stateVersion: 1 }))), 'replay');
    });

    t.test('a change that throws saves nothing; an account under another id is refused', async (t) => {
      const { accessId, agentId } = ids();
      await apply(store, write(originalWrite({ accessId, agentId, stateVersion: 1 })));
      await t.rejects(
        store.update(accessId, (a) => {
          void withBalance(a!, 1n);
          throw new Error('seller bug');
        }),
        /seller bug/,
      );
      await t.rejects(
        store.update(accessId, (a) => ({ account: { ...a!, accessId: newId('access') }, result: null })),
        /returned account/,
      );
      t.equal((await store.get(accessId))!.balanceMicros, 10_000_000n);
    });

    t.test('concurrent updates of one account all land', async (t) => {
      const { accessId, agentId } = ids();
      await apply(store, write(originalWrite({ accessId, agentId, stateVersion: 1, granted: 0n, reversed: 0n })));
      await Promise.all(
        Array.from({ length: 50 }, () =>
          store.update(accessId, (a) => ({ account: withBalance(a!, a!.balanceMicros + 1n), result: null })),
        ),
      );
      t.equal((await store.get(accessId))!.balanceMicros, 50n);
    });

    t.test('the buyer id alone unlocks nothing the agent id would not', async (t) => {
      const buyerId = newId('buyer');
      const owner = newId('agent');
      const sibling = newId('agent');
      const own = newId('access');
      const buyers = newId('access');
      await apply(store, write(originalWrite({ accessId: own, agentId: sibling, stateVersion: 1 })));
      await apply(store, write(laterWrite({ accessId: buyers, agentId: owner, stateVersion: 1, buyerId, buyerEmail: null })));
      await store.linkAgent(owner, buyerId);
      const idsOf = (accounts: Account[]) => accounts.map((a) => a.accessId).sort();

      t.same(idsOf(await accountsFor(store, { agentId: undefined, buyerId })), [], 'no agent id: nothing, whatever buyer id');
      t.same(idsOf(await accountsFor(store, { agentId: sibling, buyerId: undefined })), [own], 'agent only: its own accounts');
      t.same(
        idsOf(await accountsFor(store, { agentId: sibling, buyerId })),
        [own],
        'a buyer id next to an agent nobody tied to it adds nothing',
      );
      t.same(idsOf(await accountsFor(store, { agentId: owner, buyerId })), [buyers], 'the tied agent sees the buyer accounts');
      t.same(idsOf(await accountsFor(store, { agentId: owner, buyerId: newId('buyer') })), [buyers], 'another buyer id adds nothing');
      await store.linkAgent(sibling, buyerId);
      await store.linkAgent(sibling, buyerId);
      t.same(
        idsOf(await accountsFor(store, { agentId: sibling, buyerId })),
        [buyers, own].sort(),
        'once tied by a signed call, both, each once',
      );
      t.same(idsOf(await store.byBuyer(buyerId)), [buyers]);
    });
  });
}

t.test('sqlite: survives a reopen; two connections on one file stay consistent; balance cannot go negative', async (t) => {
  const file = join(dir, 'shared.db');
  const { accessId, agentId } = ids();
  const first = new SqliteAccountStore(file);
  const second = new SqliteAccountStore(file);
  await apply(first, write(originalWrite({ accessId, agentId, stateVersion: 1, granted: 0n, reversed: 0n })));
  for (let i = 0; i < 20; i++) {
    const s = i % 2 ? first : second;
    await s.update(accessId, (a) => ({ account: withBalance(a!, a!.balanceMicros + 3n), result: null }));
  }
  t.equal(
    await apply(second, write(originalWrite({ accessId, agentId, stateVersion: 1 }))),
    'replay',
    'a write applied through one connection is a replay on the other',
  );
  await t.rejects(
    first.update(accessId, (a) => ({ account: withBalance(a!, -1n), result: null })),
    /CHECK/,
  );
  await first.close();
  await second.close();
  const reopened = new SqliteAccountStore(file);
  t.teardown(() => reopened.close());
  t.equal((await reopened.get(accessId))!.balanceMicros, 60n);

  const db = new Database(':memory:');
  const borrowed = new SqliteAccountStore(db);
  await borrowed.close();
  t.ok(db.open, 'a database handed in stays open for its owner');
  db.close();
});

t.test('both stores agree on any write history (property)', async (t) => {
  const memory = new MemoryAccountStore();
  const sqlite = new SqliteAccountStore(join(dir, 'property.db'));
  t.teardown(() => sqlite.close());
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.record({
          v: fc.integer({ min: 0, max: 8 }),
          g: fc.option(fc.bigInt({ min: 0n, max: 10n ** 15n }), { nil: null }),
          r: fc.bigInt({ min: 0n, max: 10n ** 15n }),
          s: fc.boolean(),
        }),
        { maxLength: 12 },
      ),
      async (steps) => {
        const { accessId, agentId } = ids();
        for (const step of steps) {
          const w = write(
            originalWrite({
              accessId,
              agentId,
              stateVersion: step.v,
              granted: step.g,
              reversed: step.r,
              status: step.s ? 'active' : 'suspended',
            }),
          );
          const [a, b] = [await apply(memory, w), await apply(sqlite, w)];
          if (a !== b) return false;
        }
        const [a, b] = [await memory.get(accessId), await sqlite.get(accessId)];
        return fc.stringify({ ...a, updatedAt: 0 }) === fc.stringify({ ...b, updatedAt: 0 }) || (a === undefined && b === undefined);
      },
    ),
    { numRuns: 60 },
  );
  t.pass('agree');
});
