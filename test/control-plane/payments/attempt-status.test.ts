import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import type { Db } from '../../../control-plane/db/client.js';
import { sqlOf } from '../../../control-plane/db/sql.js';
import {
  ATTEMPT_STATUSES,
  type AttemptStatus,
  attemptStatusOf,
  moveAttempt,
  moveAttempts,
  noteAttempt,
  OPENING_STATUSES,
  sourcesOf,
  TRANSITIONS,
} from '../../../control-plane/payments/attempt-status.js';
import { newId } from '../../../shared/ids.js';
import { createTestDatabase, testProviders } from '../../helpers/database.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/**
 * The attempt rows here are written straight into the database: this is the writer's own test,
 * and every status it walks is reached through the pay URL by the payment tests (x402-paid-call,
 * pending-settlement, settle-after-response, late-capture, finish-purchases).
 */
type Owner = { organizationId: string; id: string };

async function attemptIn(db: Db, seller: Owner, status: AttemptStatus): Promise<string> {
  return (await attemptsIn(db, seller, [status]))[0]!;
}

async function attemptsIn(db: Db, seller: Owner, statuses: readonly AttemptStatus[]): Promise<string[]> {
  const ids = statuses.map(() => newId('paymentAttempt'));
  await db.paymentAttempt.createMany({
    data: statuses.map((status, i) => ({
      id: ids[i]!,
      organizationId: seller.organizationId,
      sellerId: seller.id,
      requestId: newId('request'),
      kind: 'call',
      method: 'GET',
      pathAndQuery: '/',
      bodyDigest: 'digest',
      amountMicros: 1_000n,
      status,
    })),
  });
  return ids;
}

t.test('the table: every status reachable from an opening one, every path ends', async (t) => {
  const reached = new Set<AttemptStatus>(OPENING_STATUSES);
  for (let grew = true; grew; ) {
    grew = false;
    for (const from of [...reached]) {
      for (const to of TRANSITIONS[from]) {
        if (!reached.has(to)) {
          reached.add(to);
          grew = true;
        }
      }
    }
  }
  t.same([...reached].sort(), [...ATTEMPT_STATUSES].sort(), 'no status is left unreachable');
  // No cycle: a payment's life only moves forward, so two workers cannot hand an attempt back and forth.
  const visiting = new Set<AttemptStatus>();
  const acyclic = (status: AttemptStatus): boolean => {
    if (visiting.has(status)) return false;
    visiting.add(status);
    const ok = TRANSITIONS[status].every(acyclic);
    visiting.delete(status);
    return ok;
  };
  t.ok(OPENING_STATUSES.every(acyclic), 'no way back to a status already left');
  t.throws(() => attemptStatusOf('paid'), /Unknown payment attempt status/);
  t.equal(attemptStatusOf('settled'), 'settled');
});

for (const provider of testProviders()) {
  t.test(`${provider}: the one writer walks the table and nothing else`, async (t) => {
    const { db } = await createTestDatabase(t, provider);
    const organizationId = newId('organization');
    await db.organization.create({ data: { id: organizationId, name: 'Acme' } });
    const sellerId = newId('seller');
    const seller = { organizationId, id: sellerId };
    await db.seller.create({
      data: { id: sellerId, organizationId, name: 'Acme', slug: `acme-${provider}`, upstreamBaseUrl: 'http://127.0.0.1:9' },
    });

    for (const from of ATTEMPT_STATUSES) {
      const ids = await attemptsIn(
        db,
        seller,
        ATTEMPT_STATUSES.map(() => from),
      );
      for (const [i, to] of ATTEMPT_STATUSES.entries()) {
        const allowed = TRANSITIONS[from].includes(to);
        const id = ids[i]!;
        if (sourcesOf(to).length === 0) {
          await t.rejects(moveAttempt(sqlOf(db), id, { to }), /cannot move/, `nothing moves to ${to}: attempts open in it`);
          continue;
        }
        // Through the SQL lane and through an ORM transaction: both handles reach the same writer.
        const moved =
          from === 'in_flight' ? await db.$transaction((tx) => moveAttempt(tx, id, { to })) : await moveAttempt(sqlOf(db), id, { to });
        t.equal(moved, allowed, `${from} → ${to} ${allowed ? 'moves' : 'does not'}`);
        const now = await db.paymentAttempt.findUniqueOrThrow({ where: { id } });
        t.equal(now.status, allowed ? to : from);
        if (!allowed)
          await t.rejects(moveAttempt(sqlOf(db), id, { to, from: [from] }), /cannot move/, `${from} → ${to} is refused by name`);
      }
    }

    // A move sets its columns with the status, and only when it moves.
    const id = await attemptIn(db, seller, 'in_flight');
    t.ok(await moveAttempt(sqlOf(db), id, { to: 'released', from: ['in_flight'], set: { chargedMicros: 0n } }));
    t.notOk(
      await moveAttempt(sqlOf(db), id, { to: 'released', from: ['in_flight'], set: { chargedMicros: 5n } }),
      'the second mover loses',
    );
    t.match(await db.paymentAttempt.findUniqueOrThrow({ where: { id } }), { status: 'released', chargedMicros: 0n });

    // By account: every reserved payment of the account, and only those.
    const accessId = newId('access');
    const reserved = [await attemptIn(db, seller, 'reserved'), await attemptIn(db, seller, 'reserved')];
    const settled = await attemptIn(db, seller, 'settled');
    await db.paymentAttempt.updateMany({ where: { id: { in: [...reserved, settled] } }, data: { accessId } });
    t.equal(await moveAttempts(sqlOf(db), { accessId }, { to: 'released', from: ['reserved'] }), 2);
    t.equal((await db.paymentAttempt.findUniqueOrThrow({ where: { id: settled } })).status, 'settled');

    // A note leaves the status as it is, and is written only while the attempt is where it was.
    const releasing = await attemptIn(db, seller, 'releasing');
    t.ok(await noteAttempt(sqlOf(db), releasing, { while: 'releasing', set: { refundTxHash: '0x01' } }));
    t.match(await db.paymentAttempt.findUniqueOrThrow({ where: { id: releasing } }), { status: 'releasing', refundTxHash: '0x01' });
    await moveAttempt(sqlOf(db), releasing, { to: 'released' });
    t.notOk(await noteAttempt(sqlOf(db), releasing, { while: 'releasing', set: { refundTxHash: '0x02' } }), 'moved on: not noted');
    t.equal((await db.paymentAttempt.findUniqueOrThrow({ where: { id: releasing } })).refundTxHash, '0x01');
  });
}

t.test('no module but attempt-status.ts writes a payment attempt’s status', async (t) => {
  // The scan finds each way a status could be written.
  t.same(statusWritesIn('sql`UPDATE "PaymentAttempt" SET "payer" = \'0xab\', "status" = \'x\' WHERE "id" = \'a\'`'), ['raw UPDATE']);
  t.same(statusWritesIn("db.paymentAttempt.updateMany({ where: { id }, data: { chargedMicros: 0n, status: 'released' } });"), [
    'ORM updateMany',
  ]);
  t.same(statusWritesIn('db.paymentAttempt.update({ where: { id }, data: { accessId } });'), [], 'a write that leaves the status alone');
  t.same(statusWritesIn("insertInto('PaymentAttempt', row)"), ['records an attempt']);

  const sources = ['control-plane', 'proxy', 'shared', 'runtime', 'cli'].flatMap((dir) => typescriptFiles(join(root, dir)));
  t.ok(sources.length > 100, 'the scan saw the source tree');
  const writers = sources.flatMap((file) => {
    const name = relative(root, file);
    if (name === join('control-plane', 'payments', 'attempt-status.ts')) return [];
    // Attempts are recorded (with an opening status) in one place only.
    const found = statusWritesIn(readFileSync(file, 'utf8'));
    return (name === join('control-plane', 'payments', 'challenge.ts') ? found.filter((w) => w !== 'records an attempt') : found).map(
      (w) => `${name}: ${w}`,
    );
  });
  t.same(writers, [], 'status writes outside the owner');
  t.same(sourcesOf('settled').sort(), ['failed', 'in_flight', 'settling']);
});

function statusWritesIn(text: string): string[] {
  const writes: string[] = [];
  for (const statement of text.matchAll(/UPDATE "PaymentAttempt" SET([\s\S]*?)WHERE/g)) {
    if (/"status"/.test(statement[1]!)) writes.push('raw UPDATE');
  }
  for (const call of text.matchAll(/paymentAttempt\.(update|updateMany|upsert)\(([\s\S]*?)\);/g)) {
    if (/data:\s*\{[^}]*\bstatus\b/.test(call[2]!)) writes.push(`ORM ${call[1]}`);
  }
  if (/insertInto\('PaymentAttempt'|INSERT INTO "PaymentAttempt"|paymentAttempt\.create/.test(text)) writes.push('records an attempt');
  return writes;
}

function typescriptFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return typescriptFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}
