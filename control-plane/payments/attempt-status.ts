import { Prisma } from '../../generated/prisma/sqlite/client.js';
import { ATTEMPT_STATUSES, type AttemptStatus } from '../../shared/payments/attempt-statuses.js';
import type { Sql } from '../db/sql.js';

/**
 * The life of a payment attempt, owned here: its statuses, the moves between them, and the one
 * writer every status change goes through. No other module writes `PaymentAttempt.status`
 * (test/control-plane/payments/attempt-status.test.ts reads the source to hold that line).
 *
 *   challenge_created ─claim─▶ in_flight ─┬─ seller answered non-2xx ─────────▶ released
 *                                         ├─ identity-only call answered ─────▶ delivered
 *                                         ├─ paid from credit, charged ───────▶ settled
 *                                         ├─ stateful seller's purchase ──────▶ holding ─┬─ in the escrow ─▶ reserved ─┬─ write applied ─▶ settling
 *                                         │                                              └─▶ failed                    └─ write failed ──▶ releasing ─▶ released
 *                                         └─ charged ─▶ settling ─┬─▶ settled ─ account never taken ─▶ refund_owed
 *                                                                 └─▶ failed ─ an earlier submission landed after all ─▶ settled
 *
 * A stateful seller's purchase is money held: paid into the rail's escrow at once (`holding`, then
 * `reserved`), paid out to the seller once the seller has the account (`settling`, `settled`), or
 * returned to the payer on chain when the account write fails for good (`releasing`, `released`
 * with the return's transaction). A reservation made before holds existed moved no money and is
 * released without a transaction.
 * A call paid from credit is recorded `in_flight` at once (no challenge is answered); every
 * other attempt starts `challenge_created`. A call paid by a session's voucher goes from
 * `in_flight` to `settled` as a credit-paid one does: its charge is committed to the channel, and
 * claimed on chain later with the channel's other vouchers.
 */
export { ATTEMPT_STATUSES, type AttemptStatus };

/** The statuses an attempt is recorded with. */
export const OPENING_STATUSES: readonly AttemptStatus[] = ['challenge_created', 'in_flight'];

/** Where each status may go. A status not named here is final. */
export const TRANSITIONS: Readonly<Record<AttemptStatus, readonly AttemptStatus[]>> = {
  challenge_created: ['in_flight'],
  in_flight: ['released', 'delivered', 'holding', 'reserved', 'settling', 'settled'],
  holding: ['reserved', 'failed'],
  reserved: ['settling', 'releasing', 'released'],
  settling: ['settled', 'failed'],
  releasing: ['released'],
  failed: ['settled'],
  settled: ['refund_owed'],
  delivered: [],
  released: [],
  refund_owed: [],
};

/** The statuses a usage report may still be recorded against (usage/resolve.ts, usage/draw.ts). */
export const TAKES_REPORTS: readonly AttemptStatus[] = ['in_flight', 'delivered'];

/** The statuses of an attempt someone paid (or tried to): claimed, whatever came after. */
export const CLAIMED_STATUSES: readonly AttemptStatus[] = ATTEMPT_STATUSES.filter(
  (status) => !['challenge_created', 'holding', 'reserved', 'releasing'].includes(status),
);

export function isAttemptStatus(value: unknown): value is AttemptStatus {
  return typeof value === 'string' && (ATTEMPT_STATUSES as readonly string[]).includes(value);
}

/** A status read from the database; one outside the table is a corrupted row, not a state. */
export function attemptStatusOf(value: unknown): AttemptStatus {
  if (!isAttemptStatus(value)) throw new Error(`Unknown payment attempt status ${String(value)}.`);
  return value;
}

/** The statuses a move to `to` may come from. */
export function sourcesOf(to: AttemptStatus): AttemptStatus[] {
  return ATTEMPT_STATUSES.filter((from) => TRANSITIONS[from].includes(to));
}

/** Columns a move may set beside the status: a value (bound) or an SQL expression (`Prisma.sql`). */
type Settable =
  | 'chargedMicros'
  | 'authorizedMicros'
  | 'remainderHandling'
  | 'settledAt'
  | 'verifiedAt'
  | 'settlementReason'
  | 'settleTxHash'
  | 'holdTxHash'
  | 'refundTxHash'
  | 'payer'
  | 'agentId'
  | 'protocol'
  | 'paymentMethod'
  | 'paymentPayloadJson'
  | 'channelId'
  | 'accessId';

export type AttemptMove = {
  to: AttemptStatus;
  /** Narrows the statuses moved from; each must be a source of `to` in the table. Default: all of them. */
  from?: readonly AttemptStatus[];
  set?: Partial<Record<Settable, unknown>>;
};

/**
 * Which attempts a move touches: one by id, or every one paying for an account (`held`: only those
 * paid into the escrow, which names the seller's wallet to pay out to; `paidOnChain`: not those
 * paid by card, which the card provider refunds).
 */
export type AttemptsOf = { id: string } | { accessId: string; held?: boolean; paidOnChain?: boolean };

/** Runs statements on the SQL lane or on an ORM transaction: every caller's database handle fits. */
type Runner = Pick<Sql, 'run'> | { $executeRaw: (query: Prisma.Sql) => Promise<number> };

/**
 * The one writer of an attempt's status: moves the attempts `of` names that are in one of the
 * statuses `to` may come from, and sets `set` with it, in one guarded UPDATE. Returns how many
 * moved: 0 when someone else moved it first (a second control-plane, a retried call), which each
 * caller reads as "not mine to finish". A move the table does not allow is a programming error.
 */
export async function moveAttempts(db: Runner, of: AttemptsOf, move: AttemptMove): Promise<number> {
  return run(db, moveStatement(of, move));
}

/** `moveAttempts` for one attempt by id: true when it moved. */
export async function moveAttempt(db: Runner, id: string, move: AttemptMove): Promise<boolean> {
  return (await moveAttempts(db, { id }, move)) === 1;
}

export function moveStatement(of: AttemptsOf, move: AttemptMove): Prisma.Sql {
  const allowed = sourcesOf(move.to);
  const from = move.from ?? allowed;
  const refused = from.filter((status) => !allowed.includes(status));
  if (refused.length || from.length === 0) {
    throw new Error(`A payment attempt cannot move from ${refused.join(', ') || 'nowhere'} to ${move.to}.`);
  }
  const assignments = [Prisma.sql`"status" = ${move.to}`, ...assignmentsOf(move.set)];
  const which =
    'id' in of
      ? Prisma.sql`"id" = ${of.id}`
      : Prisma.sql`"accessId" = ${of.accessId}${of.held ? Prisma.sql` AND "payoutTo" IS NOT NULL` : Prisma.empty}${
          of.paidOnChain ? Prisma.sql` AND COALESCE("paymentMethod", '') <> 'mpp_card'` : Prisma.empty
        }`;
  return Prisma.sql`UPDATE "PaymentAttempt" SET ${Prisma.join(assignments, ', ')}
    WHERE ${which} AND "status" IN (${Prisma.join(from)})`;
}

/**
 * Notes what an unfinished step left to go on (a transaction, why its outcome cannot be told) on
 * an attempt, only while it is still `while`: its status stays. Undefined values are left as they
 * are. True when it was noted.
 */
export async function noteAttempt(
  db: Runner,
  id: string,
  note: { while: AttemptStatus; set: Partial<Record<Settable, unknown>> },
): Promise<boolean> {
  const assignments = assignmentsOf(note.set);
  if (assignments.length === 0) return false;
  const statement = Prisma.sql`UPDATE "PaymentAttempt" SET ${Prisma.join(assignments, ', ')} WHERE "id" = ${id} AND "status" = ${note.while}`;
  return (await run(db, statement)) === 1;
}

function assignmentsOf(set: Partial<Record<Settable, unknown>> | undefined): Prisma.Sql[] {
  return Object.entries(set ?? {})
    .filter(([, value]) => value !== undefined)
    .map(([column, value]) => Prisma.sql`${Prisma.raw(`"${column}"`)} = ${value}`);
}

/**
 * Takes the row of each attempt (the lock a usage report and a settlement take turns on) and
 * refuses the lot unless each still takes reports: its status becomes NULL, which the column
 * refuses, aborting the transaction. The status written is the one already there, so this is not
 * a move; it lives here because it writes the column.
 */
export function holdOpenForReports(attemptIds: readonly string[]): Prisma.Sql {
  return Prisma.sql`UPDATE "PaymentAttempt" SET "status" = CASE WHEN "status" IN (${Prisma.join(TAKES_REPORTS)}) THEN "status" ELSE NULL END
    WHERE "id" IN (${Prisma.join(attemptIds)})`;
}

function run(db: Runner, statement: Prisma.Sql): Promise<number> {
  return 'run' in db ? db.run(statement) : db.$executeRaw(statement);
}
