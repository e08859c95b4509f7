import { Prisma } from '../../generated/prisma/sqlite/client.js';
import type { Db } from '../db/client.js';
import { type Sql, sqlOf } from '../db/sql.js';
import type { PaymentRail } from '../payments/rail.js';
import { applyClaim, type ClaimItem, claimLanded } from './claim-vouchers.js';
import { applyRefund, endRefund, type RefundItem, refundLanded } from './refund-session.js';
import type { SessionRail } from './session-rail.js';
import { FOLLOW_GIVE_UP_MS, openTransactionOn, recordOutcome, type SessionTransactionKind } from './session-transactions.js';
import { applySettle, type SettleItem, settleLanded } from './settle-claimed.js';

export { FOLLOW_GIVE_UP_MS };

/** The record being followed: its id and its transaction's hash, when known. */
type Followed = { id: string; transaction: string | null };

/**
 * How each kind of transaction is known to have landed from the chain, applied to the mirror once
 * it has, and (a refund) what else ends with it when it failed: its channel's hold, its attempt.
 */
const KINDS: Record<
  SessionTransactionKind,
  {
    landed(sessions: SessionRail, items: never): Promise<boolean>;
    apply(tx: Sql, items: never, record: Followed): Promise<void>;
    failed?(sql: Sql, items: never, record: Followed): Promise<void>;
  }
> = {
  claim: {
    landed: (sessions, items: ClaimItem[]) => claimLanded(sessions, items),
    apply: (tx, items: ClaimItem[]) => applyClaim(tx, items),
  },
  settle: { landed: (sessions, item: SettleItem) => settleLanded(sessions, item), apply: (tx, item: SettleItem) => applySettle(tx, item) },
  refund: {
    landed: (sessions, item: RefundItem) => refundLanded(sessions, item),
    apply: (tx, item: RefundItem, record) => applyRefund(tx, item, record.id, record.transaction),
    failed: (sql, item: RefundItem, record) => endRefund(sql, item, record.id),
  },
};

/**
 * Follows the open transaction only as far as the chain shows it landed: never given up on, nor an
 * undescribed record let go (another process may be describing it now). For a request waiting on the
 * network's slot (a payer's refund), which leaves those calls to the worker's rounds.
 */
export const NEVER = Number.POSITIVE_INFINITY;

/** A record opened and never described: nothing was sent under it, once its round had time to write it. */
const UNDESCRIBED_MS = 30_000;

/**
 * Follows the session transaction left open on the network, if any, from the chain: a claim whose
 * channels are all claimed up to its totals, a settle whose receiver is settled up to its total, or
 * a refund whose channel's refund nonce moved past its own, landed, and is applied to the mirror as
 * mined (a payer's refund's attempt finished with it, its channel let go); one that has not, after
 * `FOLLOW_GIVE_UP_MS`, failed. Never sends it again. True when the network is free for a new one.
 */
export async function followOpenTransaction(db: Db, rail: PaymentRail | undefined, giveUpAfterMs = FOLLOW_GIVE_UP_MS): Promise<boolean> {
  const sessions = rail?.sessions;
  if (!rail || !sessions) return true;
  const sql = sqlOf(db);
  const open = await openTransactionOn(sql, rail.network);
  if (!open) return true;
  const age = Date.now() - +open.createdAt;
  const described = open.amount > 0n;
  const kind = KINDS[open.kind];
  const landed = described && (await kind.landed(sessions, open.items as never));
  const record = { id: open.id, transaction: open.transaction };
  if (landed) {
    await recordOutcome(sql, open.id, { status: 'mined', transaction: open.transaction }, (tx) =>
      kind.apply(tx, open.items as never, record),
    );
    return true;
  }
  if (giveUpAfterMs === NEVER || age < (described ? giveUpAfterMs : UNDESCRIBED_MS)) return false;
  const message = described ? `not seen on chain within ${giveUpAfterMs} ms` : 'nothing was sent';
  await recordOutcome(sql, open.id, { status: 'failed', message }, async () => {});
  if (described) await kind.failed?.(sql, open.items as never, record);
  // A refund holds its channel by its record before describing it: a process that stopped between
  // the two leaves the channel held by a record that sent nothing. Let go at once, not when the hold lapses.
  else await sql.run(Prisma.sql`UPDATE "SessionChannel" SET "heldBy" = NULL, "heldUntil" = NULL WHERE "heldBy" = ${open.id}`);
  return true;
}
