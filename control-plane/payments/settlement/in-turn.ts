import type { Prisma } from '../../../generated/prisma/sqlite/client.js';
import type { Db } from '../../db/client.js';

/**
 * The pending loop's passes take attempts a page at a time, oldest first, each pass going on
 * from where the one before stopped and starting over at the end: a page of attempts that fail
 * every time (a payout the chain keeps refusing) never crowds out those behind it.
 */

type Cursor = { verifiedAt: Date; id: string };

const cursors = new WeakMap<Db, Map<string, Cursor>>();

/** The next page of attempts matching `where` (which must ask for a `verifiedAt`) for the pass named `pass`. */
export async function attemptsInTurn(
  db: Db,
  pass: string,
  where: Prisma.PaymentAttemptWhereInput,
  take = 100,
): Promise<Prisma.PaymentAttemptGetPayload<object>[]> {
  let byPass = cursors.get(db);
  if (!byPass) {
    byPass = new Map();
    cursors.set(db, byPass);
  }
  const after = byPass.get(pass);
  const page = await db.paymentAttempt.findMany({
    where: after
      ? { AND: [where, { OR: [{ verifiedAt: { gt: after.verifiedAt } }, { verifiedAt: after.verifiedAt, id: { gt: after.id } }] }] }
      : where,
    orderBy: [{ verifiedAt: 'asc' }, { id: 'asc' }],
    take,
  });
  const last = page.at(-1);
  if (page.length < take || !last?.verifiedAt) byPass.delete(pass);
  else byPass.set(pass, { verifiedAt: last.verifiedAt, id: last.id });
  return page;
}
