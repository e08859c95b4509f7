import type { Logger } from 'pino';
import { accessEndpointUrlOf } from '../catalog/access-endpoint.js';
import type { Db } from '../db/client.js';
import type { PaymentRail } from '../payments/rail.js';
import { accountWriteBody, parseSnapshot, type WriteVariant } from '../storefront/account-write.js';
import { callAccountEndpoint } from './account-call.js';
import { writeApplied, writeFailed } from './outcomes.js';
import { backoffMs, DELIVERY_SCHEDULE, type DeliverySchedule, exhausted } from './schedule.js';
import { writeVerdict } from './write-reply.js';

/**
 * Delivers the account-write outbox (spec: Seller account endpoint, Limits). Each pass takes the
 * due writes, newest version per account only (an older undelivered write is superseded: the
 * newer one describes the whole account), and delivers them side by side. A row is taken by a
 * conditional update that sets a lease, so two control-planes never deliver one row at once; a
 * row whose worker died is taken again when its lease lapses, and delivering it twice is harmless
 * (the seller applies a version once). What the seller's answer means is write-reply.ts; what
 * follows an applied or failed write (the payment captured or released) is outcomes.ts.
 */
export type WorkerOptions = { schedule: DeliverySchedule; pollMs: number; batch: number };

const DEFAULTS: WorkerOptions = { schedule: DELIVERY_SCHEDULE, pollMs: 1_000, batch: 64 };

type Due = { id: string; accessId: string; stateVersion: number };

export class AccountWriteWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private readonly options: WorkerOptions;

  constructor(
    private readonly db: Db,
    private readonly masterKey: Buffer,
    private readonly rail: PaymentRail | undefined,
    private readonly logger: Logger,
    options: Partial<WorkerOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  start(): void {
    this.schedule(0);
  }

  /** Delivers what is due now rather than at the next poll (called after a write was queued). */
  wake(): void {
    if (this.running) this.again = true;
    else this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One pass: every due write, delivered once. Returns how many were due. */
  async runOnce(now = new Date()): Promise<number> {
    const due = await this.db.accountWrite.findMany({
      where: {
        kind: 'write',
        OR: [
          { status: 'pending', nextAttemptAt: { lte: now } },
          { status: 'delivering', claimedUntil: { lt: now } },
        ],
      },
      orderBy: { nextAttemptAt: 'asc' },
      take: this.options.batch,
      select: { id: true, accessId: true, stateVersion: true },
    });
    const newest = new Map<string, Due>();
    for (const row of due) if ((newest.get(row.accessId)?.stateVersion ?? -1) < row.stateVersion) newest.set(row.accessId, row);
    await Promise.all([...newest.values()].map((row) => this.deliver(row, now)));
    return due.length;
  }

  private async deliver(row: Due, now: Date): Promise<void> {
    const { schedule } = this.options;
    const leaseUntil = new Date(now.getTime() + schedule.leaseMs);
    const taken = await this.db.accountWrite.updateMany({
      where: {
        id: row.id,
        OR: [
          { status: 'pending', nextAttemptAt: { lte: now } },
          { status: 'delivering', claimedUntil: { lt: now } },
        ],
      },
      data: { status: 'delivering', claimedUntil: leaseUntil, attempts: { increment: 1 } },
    });
    if (taken.count !== 1) return;
    // Ours only while nobody took it after a lapsed lease: every later update is conditioned on it.
    const mine = { id: row.id, status: 'delivering', claimedUntil: leaseUntil };

    const newer = await this.db.accountWrite.count({
      where: { accessId: row.accessId, kind: 'write', stateVersion: { gt: row.stateVersion } },
    });
    if (newer > 0) {
      await this.db.accountWrite.updateMany({ where: mine, data: { status: 'superseded', claimedUntil: null } });
      return;
    }

    const write = await this.db.accountWrite.findUniqueOrThrow({
      where: { id: row.id },
      include: { access: { include: { seller: true } } },
    });
    const seller = write.access.seller;
    const snapshot = parseSnapshot(write.bodyJson);
    const variant = seller.accountWriteVariant as WriteVariant;
    const firstTriedAt = write.firstTriedAt ?? now;
    if (!write.firstTriedAt) await this.db.accountWrite.updateMany({ where: mine, data: { firstTriedAt } });

    const result = await callAccountEndpoint(
      this.db,
      this.masterKey,
      {
        sellerId: seller.id,
        url: accessEndpointUrlOf(seller),
        purpose: 'access.write',
        body: accountWriteBody(snapshot, variant),
        requestId: `${snapshot.accessId}:${snapshot.stateVersion}`,
        agentId: snapshot.agentId,
        ...(variant === 'later' ? { buyer: { id: snapshot.buyerId, email: snapshot.buyerEmail } } : {}),
      },
      schedule.budgetMs,
    );
    const verdict = writeVerdict(result, schedule);
    const reply =
      result.kind === 'reply'
        ? { lastHttpStatus: result.status, lastReply: result.text.slice(0, 500) }
        : { lastHttpStatus: null, lastReply: null };
    const done = new Date();

    if (verdict.kind === 'applied') {
      const marked = await this.db.accountWrite.updateMany({
        where: mine,
        data: { status: 'applied', deliveredAt: done, claimedUntil: null, lastError: null, ...reply },
      });
      if (marked.count === 1) await writeApplied(this.db, this.rail, write.accessId, write.stateVersion, this.logger);
      return;
    }
    if (verdict.kind === 'provisioning') {
      await this.db.accountWrite.updateMany({
        where: mine,
        data: {
          status: 'pending',
          nextAttemptAt: new Date(done.getTime() + verdict.afterMs),
          claimedUntil: null,
          lastError: null,
          ...reply,
        },
      });
      await this.db.access.updateMany({
        where: { id: write.accessId, provisioningState: 'pending' },
        data: { provisioningState: 'provisioning' },
      });
      return;
    }
    const giveUp = verdict.kind === 'failed' || exhausted(schedule, write.attempts, firstTriedAt, done);
    if (giveUp) {
      const reason = verdict.kind === 'failed' ? verdict.reason : `${verdict.reason}; gave up after ${write.attempts} attempts`;
      const marked = await this.db.accountWrite.updateMany({
        where: mine,
        data: { status: 'failed', claimedUntil: null, lastError: reason, ...reply },
      });
      if (marked.count === 1) await writeFailed(this.db, write.accessId, this.logger);
      this.logger.warn({ accessId: write.accessId, stateVersion: write.stateVersion, reason }, 'account write failed for good');
      return;
    }
    const afterMs = verdict.afterMs ?? backoffMs(schedule, write.attempts);
    await this.db.accountWrite.updateMany({
      where: mine,
      data: {
        status: 'pending',
        nextAttemptAt: new Date(done.getTime() + afterMs),
        claimedUntil: null,
        lastError: verdict.reason,
        ...reply,
      },
    });
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.running = this.runOnce()
        .then((tried) => {
          // A full batch means more may be due: go on at once.
          if (tried >= this.options.batch) this.again = true;
        })
        .catch((err) => this.logger.error({ err }, 'account write pass failed'))
        .finally(() => {
          this.running = undefined;
          const again = this.again;
          this.again = false;
          this.schedule(again ? 0 : this.options.pollMs);
        });
    }, delayMs);
    this.timer.unref();
  }
}
