import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import t from 'tap';
import { enqueueMail, MailWorker, retryDelayMs } from '../../../control-plane/mail/outbox.js';
import { createMailTransport } from '../../../control-plane/mail/transport.js';
import { createTestDatabase, testProviders } from '../../helpers/database.js';
import { startTestSmtpServer } from '../../helpers/smtp-server.js';

const silent = pino({ level: 'silent' });
const mail = (n: number) => ({
  to: `buyer${n}@example.com`,
  subject: `Subject ${n}`,
  text: `Hello ${n}: https://weather.pay.localhost/x/${n}`,
});

for (const provider of testProviders()) {
  t.test(`the mail outbox on ${provider}`, async (t) => {
    const { db } = await createTestDatabase(t, provider);
    const smtp = await startTestSmtpServer(t);
    const config = { mail: { smtpUrl: smtp.url, from: 'hub <no-reply@pay.localhost>' }, dataDir: '.' };
    const worker = () => new MailWorker(db, createMailTransport(config, silent), silent);

    await t.test('queued mail reaches the SMTP server once, as written', async (t) => {
      const ids = [await enqueueMail(db, mail(1)), await enqueueMail(db, mail(2))];
      t.equal(await worker().runOnce(), 2);
      t.equal(smtp.received.length, 2);
      const first = smtp.received[0]!;
      t.same(first.envelopeTo, ['buyer1@example.com']);
      t.equal(first.subject, 'Subject 1');
      t.equal(first.text?.trim(), 'Hello 1: https://weather.pay.localhost/x/1');
      t.same(first.from?.value, [{ name: 'hub', address: 'no-reply@pay.localhost' }]);
      t.equal(first.messageId, `<${ids[0]}@hub>`);
      t.equal(await worker().runOnce(), 0, 'nothing is sent twice');
      t.same(
        (await db.mailOutbox.findMany({ orderBy: { id: 'asc' } })).map((m) => m.status),
        ['sent', 'sent'],
      );
    });

    await t.test('while the server refuses, mail waits with a backoff and is sent once it accepts', async (t) => {
      smtp.refuse = true;
      const id = await enqueueMail(db, mail(3));
      const before = smtp.received.length;
      t.equal(await worker().runOnce(), 0);
      let row = await db.mailOutbox.findUniqueOrThrow({ where: { id } });
      t.match(row, { status: 'pending', attempts: 1, lastError: /451|busy/i });
      t.ok(row.nextAttemptAt.getTime() > Date.now() + retryDelayMs(1) - 5_000, 'retried later, not at once');
      t.equal(await worker().runOnce(), 0, 'not before its time');
      smtp.refuse = false;
      t.equal(await worker().runOnce(new Date(row.nextAttemptAt.getTime() + 1)), 1);
      row = await db.mailOutbox.findUniqueOrThrow({ where: { id } });
      t.match(row, { status: 'sent', attempts: 2, lastError: null });
      t.equal(smtp.received.length, before + 1);
    });

    await t.test('an unreachable server loses nothing', async (t) => {
      const id = await enqueueMail(db, mail(4));
      const down = new MailWorker(
        db,
        createMailTransport({ ...config, mail: { ...config.mail, smtpUrl: 'smtp://hub:x@127.0.0.1:1' } }, silent),
        silent,
      );
      t.equal(await down.runOnce(), 0);
      const row = await db.mailOutbox.findUniqueOrThrow({ where: { id } });
      t.match(row, { status: 'pending', attempts: 1, lastError: /ECONNREFUSED|connect/i });
      t.equal(await worker().runOnce(new Date(row.nextAttemptAt.getTime() + 1)), 1, 'sent once a server answers');
    });

    await t.test('a send abandoned by a dead process is not sent again', async (t) => {
      const id = await enqueueMail(db, mail(5));
      // What a process leaves behind when it dies between taking the row and recording the send.
      await db.mailOutbox.update({ where: { id }, data: { status: 'sending', attempts: 1, nextAttemptAt: new Date(Date.now() - 1) } });
      const before = smtp.received.length;
      await worker().runOnce();
      t.match(await db.mailOutbox.findUniqueOrThrow({ where: { id } }), { status: 'failed', lastError: /may have gone out/ });
      t.equal(smtp.received.length, before);
    });

    await t.test('two workers at once send each mail once', async (t) => {
      for (let n = 10; n < 16; n++) await enqueueMail(db, mail(n));
      const before = smtp.received.length;
      const [a, b] = await Promise.all([worker().runOnce(), worker().runOnce()]);
      t.equal(a + b, 6);
      t.equal(smtp.received.length, before + 6);
      t.equal(new Set(smtp.received.slice(before).map((m) => m.messageId)).size, 6);
    });

    await t.test('after the last attempt a mail is failed, not retried forever', async (t) => {
      smtp.refuse = true;
      const id = await enqueueMail(db, mail(20));
      await db.mailOutbox.update({ where: { id }, data: { attempts: 7 } });
      await worker().runOnce();
      t.match(await db.mailOutbox.findUniqueOrThrow({ where: { id } }), { status: 'failed', attempts: 8 });
      smtp.refuse = false;
    });
  });
}

t.test('without SMTP outside production, each mail is an .eml file and a log line with its links', async (t) => {
  const { db } = await createTestDatabase(t, 'sqlite');
  const dataDir = mkdtempSync(join(tmpdir(), 'hub-eml-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk, _e, done) {
        lines.push(JSON.parse(chunk.toString()));
        done();
      },
    }),
  );
  const transport = createMailTransport({ mail: { smtpUrl: undefined, from: 'hub <no-reply@pay.localhost>' }, dataDir }, logger);
  t.equal(transport.kind, 'files');
  const id = await enqueueMail(db, mail(1));
  t.equal(await new MailWorker(db, transport, logger).runOnce(), 1);
  t.same(readdirSync(join(dataDir, 'mail')), [`${id}.eml`]);
  const eml = readFileSync(join(dataDir, 'mail', `${id}.eml`), 'utf8');
  t.match(eml, /^From: hub <no-reply@pay\.localhost>$/m);
  t.match(eml, /^To: buyer1@example\.com$/m);
  t.match(eml, /^Subject: Subject 1$/m);
  t.match(eml, /https:\/\/weather\.pay\.localhost\/x\/1/);
  t.match(lines, [{ msg: 'mail written (no HUB_SMTP_URL)', to: 'buyer1@example.com', links: ['https://weather.pay.localhost/x/1'] }]);
});
