import type { TestSmtpServer } from './smtp-server.js';

/**
 * A human claims an agent the way one does for real: the agent asks at `POST /agents/claim` with
 * the human's email, hub mails her a one-time link, and following it confirms the claim (and
 * verifies the email). Claiming a second agent with the same email makes it the same human's.
 */
export async function claimAgent(
  smtp: Pick<TestSmtpServer, 'received' | 'nextMail'>,
  url: (path: string) => string,
  agentToken: string,
  email: string,
): Promise<void> {
  const mailed = smtp.received.length;
  const asked = await fetch(url('/agents/claim'), {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${agentToken}` },
    body: JSON.stringify({ email }),
  });
  if (asked.status !== 202) throw new Error(`asking for a claim: ${asked.status} ${await asked.text()}`);
  const text = (await smtp.nextMail(mailed)).text ?? '';
  const link = /https?:\/\/[^\s/]+(\/agents\/claim\/confirm\/\S+)/.exec(text)?.[1];
  if (!link) throw new Error(`no claim link in the mail: ${text}`);
  const confirmed = await fetch(url(link), { method: 'POST' });
  if (confirmed.status !== 200) throw new Error(`confirming the claim: ${confirmed.status} ${await confirmed.text()}`);
}
