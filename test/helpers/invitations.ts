import type { ManagementClient } from './management.js';
import type { ReceivedMail, TestSmtpServer } from './smtp-server.js';

/** The token of the invitation link in a mail hub sent. */
export function invitationToken(mail: ReceivedMail): string | undefined {
  return /\/v1\/invitations\/(hubinv_[0-9A-Za-z]{40})\s/.exec(mail.text ?? '')?.[1];
}

/** Invites `email` with an admin's session; the answer, and the link's token from the mail that went out. */
export async function inviteMember(
  api: ManagementClient,
  smtp: TestSmtpServer,
  adminSession: string,
  input: { email: string; role: 'admin' | 'member'; name?: string },
) {
  const since = smtp.received.length;
  const reply = await api.post('/v1/organizations/current/members', adminSession, input);
  if (reply.status !== 201) return { reply, mail: undefined, token: undefined };
  const mail = await smtp.nextMail(since);
  return { reply, mail, token: invitationToken(mail) };
}

/** A member as the product makes one: invited, the mailed link accepted with `password`. Returns their session. */
export async function addMember(
  api: ManagementClient,
  smtp: TestSmtpServer,
  adminSession: string,
  input: { email: string; role: 'admin' | 'member'; password: string; name?: string },
): Promise<string> {
  const { password, ...invitation } = input;
  const { reply, token } = await inviteMember(api, smtp, adminSession, invitation);
  if (!token) throw new Error(`inviting ${input.email} failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  const accepted = await api.post(`/v1/invitations/${token}/accept`, undefined, { password });
  if (accepted.status !== 200) throw new Error(`accepting failed: ${accepted.status} ${JSON.stringify(accepted.body)}`);
  return accepted.body.sessionToken as string;
}
