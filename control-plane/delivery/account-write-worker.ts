import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Prisma } from '../../generated/prisma/sqlite/client.js';
import { PollingWorker } from '../../runtime/polling-worker.js';
import type { UpstreamAddresses } from '../../runtime/upstream-addresses.js';
import { accessEndpointUrlOf } from '../catalog/access-endpoint.js';
import type { Db } from '../db/client.js';
import type { PaymentRail } from '../payments/rail.js';
import { accountWriteBody, parseSnapshot, type WriteVariant } from '../storefront/account-write.js';
import { callAccountEndpoint, SecretCache } from './account-call.js';
import { writeFailed, writesApplied } from './outcomes.js';
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
};

const DEFAULTS: WorkerOptions = { schedule: DELIVERY_SCHEDULE, pollMs: 1_000, batch: 64 };

type Taken = Prisma.AccountWriteGetPayload<{ include: { access: { include: { seller: true } } } }>;

export class AccountWriteWorker extends PollingWorker {
  private readonly options: WorkerOptions;

  constructor(
    private readonly db: Db,
    private readonly masterKey: Buffer,
    private readonly rail: PaymentRail | undefined,
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
   */
  async runOnce(now = new Date()): Promise<number> {
    const { schedule, batch } = this.options;
    const dueWhere = {
      kind: 'write',
      OR: [
        { status: 'pending', nextAttemptAt: { lte: now } },
        { status: 'delivering', claimedUntil: { lt: now } },
      ],
    };
    // Two index-backed looks rather than one OR: due pending writes first, then lapsed leases.
    const due = await this.db.accountWrite.findMany({
      where: { kind: 'write', status: 'pending', nextAttemptAt: { lte: now } },
      orderBy: { nextAttemptAt: 'asc' },
      take: batch,
      select: { id: true },
    });
    if (due.length < batch) {
      due.push(
        ...(await this.db.accountWrite.findMany({
          where: { kind: 'write', status: 'delivering', claimedUntil: { lt: now } },
          take: batch - due.length,
          select: { id: true },
        })),
      );
    }
    if (due.length === 0) return 0;
    const token = randomBytes(12).toString('base64url');
    await this.db.accountWrite.updateMany({
      where: { id: { in: due.map((row) => row.id) }, ...dueWhere },
      data: {
        status: 'delivering',
        claimedUntil: new Date(now.getTime() + schedule.leaseMs),
        claimedBy: token,
        attempts: { increment: 1 },
      },
    });
    // Every later update is conditioned on the token: a row taken again after a lapsed lease is no longer ours.
    const mine = { claimedBy: token, status: 'delivering' };
    const taken = await this.db.accountWrite.findMany({ where: mine, include: { access: { include: { seller: true } } } });
    if (taken.length === 0) return due.length;
    await this.db.accountWrite.updateMany({ where: { ...mine, firstTriedAt: null }, data: { firstTriedAt: now } });

    const newest = await this.db.accountWrite.groupBy({
      by: ['accessId'],
      where: { kind: 'write', accessId: { in: [...new Set(taken.map((row) => row.accessId))] } },
      _max: { stateVersion: true },
    });
    const newestOf = new Map(newest.map((row) => [row.accessId, row._max.stateVersion ?? 0]));
    const superseded = taken.filter((row) => row.stateVersion < (newestOf.get(row.accessId) ?? 0));
    if (superseded.length) {
      await this.db.accountWrite.updateMany({
        where: { ...mine, id: { in: superseded.map((row) => row.id) } },
        data: { status: 'superseded', claimedUntil: null },
      });
    }
    const toSend = taken.filter((row) => row.stateVersion >= (newestOf.get(row.accessId) ?? 0));
    const secrets = new SecretCache(this.db, this.masterKey);
    const outcomes = await Promise.all(toSend.map(async (row) => ({ row, ...(await this.send(row, secrets)) })));

    const applied = outcomes.filter((o) => o.verdict.kind === 'applied');
    const done = new Date();
    for (const status of new Set(applied.map((o) => o.status))) {
      await this.db.accountWrite.updateMany({
        where: { ...mine, id: { in: applied.filter((o) => o.status === status).map((o) => o.row.id) } },
        data: { status: 'applied', deliveredAt: done, claimedUntil: null, lastError: null, lastHttpStatus: status, lastReply: null },
      });
    }
    if (applied.length)
      await writesApplied(
        this.db,
        this.rail,
        applied.map((o) => o.row),
        this.logger,
      );
    for (const outcome of outcomes) if (outcome.verdict.kind !== 'applied') await this.settle(outcome, mine, done, now);
    return due.length;
  }

  private async send(row: Taken, secrets: SecretCache): Promise<{ verdict: WriteVerdict; status: number | null; reply: string | null }> {
    const seller = row.access.seller;
    const snapshot = parseSnapshot(row.bodyJson);
    const variant = seller.accountWriteVariant as WriteVariant;
    const result = await callAccountEndpoint(
      secrets,
      {
        sellerId: seller.id,
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

  /** Records a write that was not applied: to be sent again, or failed for good. */
  private async settle(
    outcome: { row: Taken; verdict: WriteVerdict; status: number | null; reply: string | null },
    mine: { claimedBy: string; status: string },
    done: Date,
    now: Date,
  ): Promise<void> {
    const { row, verdict } = outcome;
    const { schedule } = this.options;
    const where = { ...mine, id: row.id };
    const reply = { lastHttpStatus: outcome.status, lastReply: outcome.reply };
    // Provisioning replies count as attempts: a seller that provisions for ever is given up on.
    const spent = exhausted(schedule, row.attempts, row.firstTriedAt ?? now, done);
    if (verdict.kind === 'provisioning' && !spent) {
      await this.db.accountWrite.updateMany({
        where,
        data: {
          status: 'pending',
          nextAttemptAt: new Date(done.getTime() + verdict.afterMs),
          claimedUntil: null,
          lastError: null,
          ...reply,
        },
      });
      await this.db.access.updateMany({
        where: { id: row.accessId, provisioningState: 'pending' },
        data: { provisioningState: 'provisioning' },
      });
      return;
    }
    if (verdict.kind === 'applied') return;
    if (verdict.kind === 'failed' || spent) {
      const why = verdict.kind === 'provisioning' ? 'the seller was still provisioning' : verdict.reason;
      const reason = verdict.kind === 'failed' ? why : `${why}; gave up after ${row.attempts} attempts`;
      const marked = await this.db.accountWrite.updateMany({
        where,
        data: { status: 'failed', claimedUntil: null, lastError: reason, ...reply },
      });
      if (marked.count === 1) await writeFailed(this.db, row.accessId, this.logger);
      this.logger.warn({ accessId: row.accessId, stateVersion: row.stateVersion, reason }, 'account write failed for good');
      return;
    }
    if (verdict.kind !== 'retry') return; // provisioning, scheduled above
    const afterMs = verdict.afterMs ?? backoffMs(schedule, row.attempts);
    await this.db.accountWrite.updateMany({
      where,
      data: {
        status: 'pending',
        nextAttemptAt: new Date(done.getTime() + afterMs),
        claimedUntil: null,
        lastError: verdict.reason,
        ...reply,
      },
    });
  }
}
