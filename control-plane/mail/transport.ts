import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createTransport } from 'nodemailer';
import type { Logger } from 'pino';
import type { HubConfig } from '../../shared/config.js';

/** One mail, as the outbox hands it to a transport. */
export type OutgoingMail = { id: string; to: string; subject: string; text: string };

/**
 * Where mail leaves hub: the SMTP server `HUB_SMTP_URL` names (nodemailer), or, outside
 * production without one, an `.eml` file per mail under `$HUB_DATA_DIR/mail/` with a log line
 * naming it and the links it holds, so a newcomer can click through without a mail server.
 * Each mail's Message-ID is derived from its outbox id.
 */
export type MailTransport = { kind: 'smtp' | 'files'; send(mail: OutgoingMail): Promise<void>; close(): void };

export function createMailTransport(config: Pick<HubConfig, 'mail' | 'dataDir'>, logger: Logger): MailTransport {
  const { smtpUrl, from } = config.mail;
  const envelope = (mail: OutgoingMail) => ({
    from,
    to: mail.to,
    subject: mail.subject,
    text: mail.text,
    messageId: `<${mail.id}@hub>`,
  });
  if (smtpUrl) {
    const smtp = createTransport(smtpUrl);
    return {
      kind: 'smtp',
      send: async (mail) => void (await smtp.sendMail(envelope(mail))),
      close: () => smtp.close(),
    };
  }
  const folder = join(config.dataDir, 'mail');
  const builder = createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    kind: 'files',
    send: async (mail) => {
      const built = await builder.sendMail(envelope(mail));
      await mkdir(folder, { recursive: true });
      const file = join(folder, `${mail.id}.eml`);
      await writeFile(file, built.message as Buffer, { mode: 0o600 });
      logger.info(
        { to: mail.to, subject: mail.subject, file, links: mail.text.match(/https?:\/\/\S+/g) ?? [] },
        'mail written (no HUB_SMTP_URL)',
      );
    },
    close: () => builder.close(),
  };
}
