import type { Db } from '../db/client.js';
import { sqlOf } from '../db/sql.js';
import type { PaymentRail } from '../payments/rail.js';
import { applyClaim, type ClaimItem, claimLanded } from './claim-vouchers.js';
import { openTransactionOn, recordOutcome } from './session-transactions.js';
import { applySettle, type SettleItem, settleLanded } from './settle-claimed.js';

/**
 * How long a transaction that left no known outcome (its sender stopped, or the chain kept its
 * receipt) is waited for before it counts as failed and its channels may be claimed again. Should
 * it land after that, nothing is paid twice: a claim row at the total already claimed changes
 * nothing and one below it reverts, and a settle sends only what is claimed and not yet sent.
 */
export const FOLLOW_GIVE_UP_MS = 600_000;

/** A record opened and never described: nothing was sent under it, once its round had time to write it. */
const UNDESCRIBED_MS = 30_000;

/**
 * Follows the session transaction left open on the network, if any, from the chain: a claim whose
 * channels are all claimed up to its totals, or a settle whose receiver is settled up to its
 * total, landed, and is applied to the mirror as mined; one that has not, after
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
  const landed = !described
    ? false
    : open.kind === 'claim'
      ? await claimLanded(sessions, open.items as ClaimItem[])
      : await settleLanded(sessions, open.items as SettleItem);
  if (landed) {
    const apply = open.kind === 'claim' ? applyClaim : applySettle;
    await recordOutcome(sql, open.id, { status: 'mined', transaction: open.transaction }, (tx) => apply(tx, open.items as never));
    return true;
  }
  if (age < (described ? giveUpAfterMs : UNDESCRIBED_MS)) return false;
  const message = described ? `not seen on chain within ${giveUpAfterMs} ms` : 'nothing was sent';
  await recordOutcome(sql, open.id, { status: 'failed', message }, async () => {});
  return true;
}
