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
  return {
    kind: 'files',
    send: async (mail) => {
      await mkdir(folder, { recursive: true });
      const file = join(folder, `${mail.id}.eml`);
      await writeFile(file, emlFile(mail, from), { mode: 0o600 });
      logger.info(
        { to: mail.to, subject: mail.subject, file, links: mail.text.match(/https?:\/\/\S+/g) ?? [] },
        'mail written (no HUB_SMTP_URL)',
      );
    },
    close: () => {},
  };
}

/**
 * A mail as an .eml file a person reads in a text editor or opens in a mail client: plain UTF-8
 * text sent 8bit, so its links stay whole on one line (a transfer encoding would fold them).
 */
export function emlFile(mail: OutgoingMail, from: string, date = new Date()): string {
  const header = (text: string) => (/^[\x20-\x7e]*$/.test(text) ? text : `=?UTF-8?B?${Buffer.from(text).toString('base64')}?=`);
  return [
    `From: ${header(from)}`,
    `To: ${mail.to}`,
    `Subject: ${header(mail.subject)}`,
    `Date: ${date.toUTCString()}`,
    `Message-ID: <${mail.id}@hub>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 8bit',
    '',
    mail.text.replace(/\r?\n/g, '\r\n'),
  ].join('\r\n');
}
