import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { Prisma } from '../../generated/prisma/sqlite/client.js';
import { type Pass, PollingWorker } from '../../runtime/polling-worker.js';
import type { UpstreamAddresses } from '../../runtime/upstream-addresses.js';
import type { CardPaymentsConfig } from '../../shared/config.js';
import { accessEndpointUrlOf } from '../catalog/access-endpoint.js';
import type { Db } from '../db/client.js';
import { dateOf, inList, type SqlDatabase, sqlOf } from '../db/sql.js';
import type { Attempt } from '../payments/attempt-rows.js';
import type { PaymentRails } from '../payments/rails.js';
import { accountWriteBody, parseSnapshot, type WriteVariant } from '../storefront/account-write.js';
import { callAccountEndpoint, SecretCache } from './account-call.js';
import { type HeldMoney, moveHeldMoney, writeFailed, writesApplied } from './outcomes.js';
import { backoffMs, DELIVERY_SCHEDULE, type DeliverySchedule, exhausted } from './schedule.js';
import { type WriteVerdict, writeVerdict } from './write-reply.js';

/**
 * Delivers the account-write outbox (spec: Seller account endpoint, Limits). Each pass takes the
 * due writes, newest version per account only (an older undelivered write is superseded: the
 * newer one describes the whole account), and delivers them side by side. Rows are taken by a
 * conditional update that sets a lease and the pass's token, so two control-planes never deliver
 * one row at once; a row whose worker died is taken again when its lease lapses, and delivering
 * it twice is harmless (the seller applies a version once). What the seller's answer means is write-reply.ts; what
 * follows an applied or failed write (the payment captured or released) is outcomes.ts.
 */
export type WorkerOptions = {
  schedule: DeliverySchedule;
  pollMs: number;
  batch: number;
  /** Where hub may connect on a seller's say-so, kept at every connection (none: anywhere, as in tests). */
  addresses?: UpstreamAddresses;
  /** The card provider's keys: a write failed for good refunds the card payments that bought it. */
  cards?: CardPaymentsConfig;
};

const DEFAULTS: WorkerOptions = { schedule: DELIVERY_SCHEDULE, pollMs: 1_000, batch: 64 };

/**
 * Writes (`w`) of the kind `write` that match `where`, in `order`, at most `limit`, each with what
 * sending it needs: its seller's endpoint and variant.
 */
function dueWrites(where: Prisma.Sql, order: Prisma.Sql, limit: number): Prisma.Sql {
  return Prisma.sql`SELECT w."id", w."accessId", w."stateVersion", w."bodyJson",
      s."id" AS "sellerId", s."upstreamBaseUrl", s."accessEndpointUrl", s."accountWriteVariant", s."sandbox"
    FROM "AccountWrite" w JOIN "Access" a ON a."id" = w."accessId" JOIN "Seller" s ON s."id" = a."sellerId"
    WHERE w."kind" = 'write' AND ${where} ${order} LIMIT ${limit}`;
}

/**
 * A condition that holds, and on PostgreSQL lets the statement's transaction commit without waiting
 * for its WAL to reach the disk (`synchronous_commit` off for that transaction alone; the session
 * keeps its setting). For the take and the applied mark only: bookkeeping whose loss in a crash of
 * the database server means at worst that a write is delivered again, which the seller applies
 * once (a version is applied once). Nothing that must outlive it depends on it unflushed: WAL is
 * flushed in order, so the next transaction that waits for its own flush (the payments captured
 * after a mark, moveHeldMoney) makes the mark durable first. SQLite's connection never waits for a
 * flush at commit (WAL with synchronous=NORMAL, db/client.ts).
 */
function commitUnflushed(provider: SqlDatabase['provider']): Prisma.Sql {
  return provider === 'postgresql' ? Prisma.sql` AND (SELECT set_config('synchronous_commit', 'off', true)) = 'off'` : Prisma.empty;
}

type DueRow = {
  id: string;
  accessId: string;
  stateVersion: unknown;
  bodyJson: string;
  sellerId: string;
  upstreamBaseUrl: string;
  accessEndpointUrl: string | null;
  accountWriteVariant: string;
  /** A boolean on PostgreSQL, 0 or 1 on SQLite (a raw query). */
  sandbox: unknown;
};

/** A write this pass took. */
type Taken = {
  id: string;
  accessId: string;
  stateVersion: number;
  bodyJson: string;
  /** This pass's attempt counted. */
  attempts: number;
  firstTriedAt: Date;
  seller: { id: string; upstreamBaseUrl: string; accessEndpointUrl: string | null; accountWriteVariant: string; sandbox: boolean };
  /** The newest version among its account's writes. */
  newest: number;
};

function takenOf(due: DueRow, took: { attempts: unknown; firstTriedAt: unknown; newest: unknown }): Taken {
  return {
    id: due.id,
    accessId: due.accessId,
    stateVersion: Number(due.stateVersion),
    bodyJson: due.bodyJson,
    attempts: Number(took.attempts),
    firstTriedAt: dateOf(took.firstTriedAt),
    seller: {
      id: due.sellerId,
      upstreamBaseUrl: due.upstreamBaseUrl,
      accessEndpointUrl: due.accessEndpointUrl,
      accountWriteVariant: due.accountWriteVariant,
      sandbox: Boolean(due.sandbox),
    },
    newest: Number(took.newest),
  };
}

export class AccountWriteWorker extends PollingWorker {
  private readonly options: WorkerOptions;
  /** The accounts with a write taken by a pass that has not finished recording it. */
  private readonly inFlight = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly masterKey: Buffer,
    private readonly rails: PaymentRails,
    logger: Logger,
    options: Partial<WorkerOptions> = {},
  ) {
    const merged = { ...DEFAULTS, ...options };
    super(logger, { pollMs: merged.pollMs, batch: merged.batch, what: 'account write' });
    this.options = merged;
  }

  /**
   * One pass: takes up to a batch of due writes in one conditional update marked with this pass's
   * token, supersedes all but the newest version per account, delivers the rest side by side, and
   * records the outcomes (applied ones together). Returns how many were due.
   *
   * Its statements are few whatever the batch, on the SQL lane (db/sql.ts): the due writes read
   * with their sellers (a second look for lapsed leases when the first does not fill the batch),
   * the take (which reads back what it took), the sellers' secrets beside it, and, once the
   * sellers have answered, the writes applied and their accounts together. On PostgreSQL every
   * statement is a round trip and every commit a flush of the WAL to disk.
   */
  async runOnce(now = new Date()): Promise<number> {
    const { due, finishing } = await this.deliver(now);
    await finishing;
    return due;
  }

  /**
   * Running, the worker starts the next pass once this one has taken its writes, while it sends
   * them and records what became of them (`finishing`): the next batch's reads and take overlap
   * these deliveries. The order of an account's writes holds: the rows in flight are leased, so the
   * next pass does not take them, and it leaves any other write of their accounts for later.
   */
  protected override pass(): Promise<Pass> {
    return this.deliver(new Date());
  }

  private async deliver(now: Date): Promise<Pass> {
    const { schedule, batch } = this.options;
    const sql = sqlOf(this.db);
    const list = (values: readonly string[]) => inList(sql.provider, values);
    // Two index-backed looks rather than one OR: due pending writes first, then lapsed leases.
    const pending = Prisma.sql`w."status" = 'pending' AND w."nextAttemptAt" <= ${now}`;
    const due = await sql.all<DueRow>(dueWrites(pending, Prisma.sql`ORDER BY w."nextAttemptAt"`, batch));
    if (due.length < batch) {
      const lapsed = Prisma.sql`w."status" = 'delivering' AND w."claimedUntil" < ${now}`;
      due.push(...(await sql.all<DueRow>(dueWrites(lapsed, Prisma.empty, batch - due.length))));
    }
    if (due.length === 0) return { due: 0 };
    // An account with a write still in flight in an earlier pass waits for it: its writes go in order.
    const free = due.filter((row) => !this.inFlight.has(row.accessId));
    if (free.length === 0) return { due: due.length };
    const token = randomBytes(12).toString('base64url');
    const secrets = new SecretCache(this.db, this.masterKey);
    // The take reads back the rows it took, with the attempt it counted (the first attempt's time
    // set by it too) and the newest version of each row's account. The sellers' secrets are read
    // beside it. Whether a row is still due is a CASE, not an OR of two ranges: SQLite would walk
    // those ranges' indexes (the whole backlog) rather than look up the ids.
    const [took] = await Promise.all([
      sql.all<{ id: string; attempts: unknown; firstTriedAt: unknown; newest: unknown }>(Prisma.sql`UPDATE "AccountWrite"
        SET "status" = 'delivering', "claimedUntil" = ${new Date(now.getTime() + schedule.leaseMs)}, "claimedBy" = ${token},
          "attempts" = "attempts" + 1, "firstTriedAt" = COALESCE("firstTriedAt", ${now})
        WHERE "id" ${list(free.map((row) => row.id))} AND "kind" = 'write'
          AND CASE "status" WHEN 'pending' THEN "nextAttemptAt" <= ${now} WHEN 'delivering' THEN "claimedUntil" < ${now} ELSE FALSE END
          ${commitUnflushed(sql.provider)}
        RETURNING "id", "attempts", "firstTriedAt",
          (SELECT MAX(n."stateVersion") FROM "AccountWrite" n WHERE n."accessId" = "AccountWrite"."accessId" AND n."kind" = 'write') AS "newest"`),
      ...[...new Set(free.map((row) => row.sellerId))].map((sellerId) => secrets.newest(sellerId)),
    ]);
    if (took.length === 0) return { due: due.length };
    const dueById = new Map(due.map((row) => [row.id, row]));
    const taken = took.map((row): Taken => takenOf(dueById.get(row.id)!, row));
    const accounts = [...new Set(taken.map((row) => row.accessId))];
    for (const accessId of accounts) this.inFlight.add(accessId);
    const finishing = this.sendAndRecord(taken, token, secrets).finally(() => {
      for (const accessId of accounts) this.inFlight.delete(accessId);
    });
    return { due: due.length, finishing };
  }

  /** Sends the writes a pass took and records what became of them. */
  private async sendAndRecord(taken: Taken[], token: string, secrets: SecretCache): Promise<void> {
    const sql = sqlOf(this.db);
    const list = (values: readonly string[]) => inList(sql.provider, values);
    // Every later update is conditioned on the token: a row taken again after a lapsed lease is no longer ours.
    // A CASE, not `"status" = 'delivering'`: with that condition PostgreSQL walks the lease's partial
    // index (every delivering row, and the dead entries of those since delivered) instead of looking
    // up the pass's ids; each mark grew from 2.3 to 11.7 ms over a backlog of 38,000 writes.
    const mine = Prisma.sql`CASE "status" WHEN 'delivering' THEN "claimedBy" = ${token} ELSE FALSE END`;

    const superseded = taken.filter((row) => row.stateVersion < row.newest);
    if (superseded.length) {
      await sql.run(Prisma.sql`UPDATE "AccountWrite" SET "status" = 'superseded', "claimedUntil" = NULL
        WHERE ${mine} AND "id" ${list(superseded.map((row) => row.id))}`);
    }
    const toSend = taken.filter((row) => row.stateVersion >= row.newest);
    const outcomes = await Promise.all(toSend.map(async (row) => ({ row, ...(await this.send(row, secrets)) })));

    const applied = outcomes.filter((o) => o.verdict.kind === 'applied');
    const done = new Date();
    // Every outcome is recorded before any money moves: transactions take seconds each, and rows
    // still leased to this pass are recorded while the lease holds.
    const held: HeldMoney = { payOut: [], giveBack: [], refundCards: [] };
    if (applied.length) {
      held.payOut = await writesApplied(
        this.db,
        applied.map((o) => o.row),
        [...new Set(applied.map((o) => o.status))].map((status) => {
          const ids = applied.filter((o) => o.status === status).map((o) => o.row.id);
          return Prisma.sql`UPDATE "AccountWrite" SET "status" = 'applied', "deliveredAt" = ${done}, "claimedUntil" = NULL,
              "lastError" = NULL, "lastHttpStatus" = ${status}, "lastReply" = NULL
            WHERE ${mine} AND "id" ${list(ids)}${commitUnflushed(sql.provider)}`;
        }),
      );
    }
    for (const outcome of outcomes) {
      if (outcome.verdict.kind !== 'applied')
        held.giveBack.push(...(await this.settle(outcome, { claimedBy: token, status: 'delivering' }, done, held)));
    }
    await moveHeldMoney(this.db, this.rails, held, this.logger, this.options.cards);
  }

  private async send(row: Taken, secrets: SecretCache): Promise<{ verdict: WriteVerdict; status: number | null; reply: string | null }> {
    const seller = row.seller;
    const snapshot = parseSnapshot(row.bodyJson);
    const variant = seller.accountWriteVariant as WriteVariant;
    const result = await callAccountEndpoint(
      secrets,
      {
        sellerId: seller.id,
        sandbox: seller.sandbox,
        url: accessEndpointUrlOf(seller),
        purpose: 'access.write',
        body: accountWriteBody(snapshot, variant),
        requestId: `${snapshot.accessId}:${snapshot.stateVersion}`,
        agentId: snapshot.agentId,
        ...(variant === 'later' ? { buyer: { id: snapshot.buyerId, email: snapshot.buyerEmail } } : {}),
      },
      this.options.schedule.budgetMs,
      this.options.addresses,
    );
    return {
      verdict: writeVerdict(result, this.options.schedule),
      status: result.kind === 'reply' ? result.status : null,
      reply: result.kind === 'reply' ? result.text.slice(0, 500) : null,
    };
  }

  /**
   * Records a write that was not applied: to be sent again, or failed for good (answering the
   * payments held for it, to return). A row no longer this pass's (its lease lapsed and another
   * worker took it) is left to that worker, and said so.
   */
  private async settle(
    outcome: { row: Taken; verdict: WriteVerdict; status: number | null; reply: string | null },
    mine: { claimedBy: string; status: string },
    done: Date,
    held: HeldMoney,
  ): Promise<Attempt[]> {
    const { row, verdict } = outcome;
    const { schedule } = this.options;
    const where = { ...mine, id: row.id };
    const reply = { lastHttpStatus: outcome.status, lastReply: outcome.reply };
    // Provisioning replies count as attempts: a seller that provisions for ever is given up on.
    const spent = exhausted(schedule, row.attempts, row.firstTriedAt, done);
    if (verdict.kind === 'provisioning' && !spent) {
      const scheduled = await this.db.accountWrite.updateMany({
        where,
        data: {
          status: 'pending',
          nextAttemptAt: new Date(done.getTime() + verdict.afterMs),
          claimedUntil: null,
          lastError: null,
          ...reply,
        },
      });
      if (this.lost(row, scheduled.count)) return [];
      await this.db.access.updateMany({
        where: { id: row.accessId, provisioningState: 'pending' },
        data: { provisioningState: 'provisioning' },
      });
      return [];
    }
    if (verdict.kind === 'applied') return [];
    if (verdict.kind === 'failed' || spent) {
      const why = verdict.kind === 'provisioning' ? 'the seller was still provisioning' : verdict.reason;
      const reason = verdict.kind === 'failed' ? why : `${why}; gave up after ${row.attempts} attempts`;
      const marked = await this.db.accountWrite.updateMany({
        where,
        data: { status: 'failed', claimedUntil: null, lastError: reason, ...reply },
      });
      if (this.lost(row, marked.count)) return [];
      this.logger.warn({ accessId: row.accessId, stateVersion: row.stateVersion, reason }, 'account write failed for good');
      held.refundCards.push(row.accessId);
      return writeFailed(this.db, row.accessId, this.logger);
    }
    if (verdict.kind !== 'retry') return []; // provisioning, scheduled above
    const afterMs = verdict.afterMs ?? backoffMs(schedule, row.attempts);
    const scheduled = await this.db.accountWrite.updateMany({
      where,
      data: {
        status: 'pending',
        nextAttemptAt: new Date(done.getTime() + afterMs),
        claimedUntil: null,
        lastError: verdict.reason,
        ...reply,
      },
    });
    this.lost(row, scheduled.count);
    return [];
  }

  /** True, and logged, when recording a write found it no longer this pass's: its lease lapsed. */
  private lost(row: Taken, recorded: number): boolean {
    if (recorded === 1) return false;
    this.logger.warn(
      { accessId: row.accessId, stateVersion: row.stateVersion },
      'an account write outlived its lease and was taken again; the worker that took it records it',
    );
    return true;
  }
}
