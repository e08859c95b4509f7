import type { Logger } from 'pino';
import { PollingWorker } from '../../runtime/polling-worker.js';
import { newId } from '../../shared/ids.js';
import type { Db } from '../db/client.js';
import type { MailTransport } from './transport.js';

/**
 * Mail goes out through an outbox (`MailOutbox`): a row written in the same transaction as what
 * caused it, so a mail exists exactly when its cause committed, and sent afterwards by
 * `MailWorker`. Rows move pending → sending → sent; a failed send goes back to pending with a
 * backoff, up to MAX_ATTEMPTS, then `failed`. A row left `sending` by a process that died while
 * sending is never sent again (it may have gone out): it becomes `failed` with that reason.
 */

export type NewMail = { to: string; subject: string; text: string };

/** Queues a mail on `tx` (a transaction or the client); returns the mail id. */
export async function enqueueMail(tx: Pick<Db, 'mailOutbox'>, mail: NewMail): Promise<string> {
  const id = newId('mail');
  await tx.mailOutbox.create({ data: { id, toAddress: mail.to, subject: mail.subject, bodyText: mail.text, status: 'pending' } });
  return id;
}

export const MAX_ATTEMPTS = 8;
/** Longest a send may take before its row is presumed abandoned by a dead process. */
const SEND_LEASE_MS = 120_000;
const FIRST_RETRY_MS = 30_000;
const LONGEST_RETRY_MS = 3_600_000;
const BATCH = 20;

/** Delay before attempt `attempt + 1`, after `attempt` failed ones: 30 s, 1 min, 2 min … at most 1 h. */
export function retryDelayMs(attempt: number): number {
  return Math.min(LONGEST_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempt - 1));
}

export class MailWorker extends PollingWorker {
  constructor(
    private readonly db: Db,
    private readonly transport: MailTransport,
    logger: Logger,
    options = { pollMs: 2_000 },
  ) {
    super(logger, { pollMs: options.pollMs, batch: BATCH, what: 'mail' });
  }

  override async stop(): Promise<void> {
    await super.stop();
    this.transport.close();
  }

  /** One pass: gives up abandoned sends, then sends every due mail once. */
  async runOnce(now = new Date()): Promise<number> {
    await this.db.mailOutbox.updateMany({
      where: { status: 'sending', nextAttemptAt: { lt: now } },
      data: { status: 'failed', lastError: 'the process stopped while sending: it may have gone out, so it is not sent again' },
    });
    const due = await this.db.mailOutbox.findMany({
      where: { status: 'pending', nextAttemptAt: { lte: now } },
      orderBy: { nextAttemptAt: 'asc' },
      take: BATCH,
    });
    let sent = 0;
    for (const mail of due) {
      // Taking the row is conditional, so two workers (two control-planes) never both send it.
      const taken = await this.db.mailOutbox.updateMany({
        where: { id: mail.id, status: 'pending' },
        data: { status: 'sending', attempts: { increment: 1 }, nextAttemptAt: new Date(now.getTime() + SEND_LEASE_MS) },
      });
      if (taken.count !== 1) continue;
      const attempt = mail.attempts + 1;
      try {
        await this.transport.send({ id: mail.id, to: mail.toAddress, subject: mail.subject, text: mail.bodyText });
        await this.db.mailOutbox.update({ where: { id: mail.id }, data: { status: 'sent', sentAt: new Date(), lastError: null } });
        sent++;
      } catch (err) {
        const lastError = (err as Error).message.slice(0, 500);
        const giveUp = attempt >= MAX_ATTEMPTS;
        await this.db.mailOutbox.update({
          where: { id: mail.id },
          data: giveUp
            ? { status: 'failed', lastError }
            : { status: 'pending', lastError, nextAttemptAt: new Date(Date.now() + retryDelayMs(attempt)) },
        });
        this.logger.warn({ mailId: mail.id, attempt, err: lastError }, giveUp ? 'mail failed for good' : 'mail not sent; will retry');
      }
    }
    return sent;
  }
}
