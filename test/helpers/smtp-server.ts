import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

type Tap = { teardown: (fn: () => unknown) => void };

export type ReceivedMail = ParsedMail & { envelopeTo: string[] };

export type TestSmtpServer = {
  /** `smtp://user:password@127.0.0.1:<port>` for HUB_SMTP_URL. */
  url: string;
  received: ReceivedMail[];
  /** While set, every message is refused with a temporary failure (451). */
  refuse: boolean;
  /** Resolves with the next mail to arrive (or one that already did, after `since` of them). */
  nextMail(since?: number, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
};

/** A real SMTP server on loopback (the smtp-server library), with login, that keeps what it receives. */
export async function startTestSmtpServer(t: Tap): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const state = { refuse: false };
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    authMethods: ['PLAIN', 'LOGIN'],
    onAuth(auth, _session, callback) {
      if (auth.username === 'hub' && auth.password === 'mail-secret') callback(null, { user: 'hub' });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (state.refuse) {
          const err = new Error('Mailbox busy, try later') as Error & { responseCode: number };
          err.responseCode = 451;
          return callback(err);
        }
        simpleParser(Buffer.concat(chunks)).then(
          (mail) => {
            received.push(Object.assign(mail, { envelopeTo: session.envelope.rcptTo.map((r) => r.address) }));
            callback();
          },
          (err: Error) => callback(err),
        );
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  t.teardown(close);
  return {
    url: `smtp://hub:mail-secret@127.0.0.1:${port}`,
    received,
    get refuse() {
      return state.refuse;
    },
    set refuse(value: boolean) {
      state.refuse = value;
    },
    async nextMail(since = received.length, timeoutMs = 10_000) {
      for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
        if (received.length > since) return received[since]!;
      }
      throw new Error('no mail arrived');
    },
    close,
  };
}
