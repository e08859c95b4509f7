import { newId } from '../shared/ids.js';
import { SCOPES } from '../shared/scopes.js';
import { createApiKey, createSession } from './auth/credentials.js';
import { hashPassword, verifyPassword } from './auth/password.js';
import type { Db } from './db/client.js';

export type BootstrapResult = {
  organizationId: string;
  organizationName: string;
  userId: string;
  email: string;
  sessionToken: string;
  apiKey: string;
  apiKeyId: string;
  scopes: string[];
};

export class BootstrapRefused extends Error {
  override name = 'BootstrapRefused';
}

/**
 * First-run set-up: an organization, its admin (reusing the user when the email exists), a
 * dashboard session and an API key with every scope.
 *
 * Refuses a database that already has an organization unless `another` is set: a bootstrap that
 * lands in the wrong database (another shell's DATABASE_URL) would otherwise succeed quietly and
 * hand out a key the running hub does not know.
 *
 * An existing user (`another`, the same admin's next organization) is reused only as themselves:
 * one with a password must give it (`password`), since the session printed here is theirs and
 * reaches every organization they belong to. Their password is never set or changed here; a
 * person with an account joins someone else's organization by accepting an invitation.
 */
export async function bootstrap(
  db: Db,
  input: { email: string; organizationName: string; password?: string; another?: boolean },
): Promise<BootstrapResult> {
  const email = input.email.trim().toLowerCase();
  const passwordHash = input.password ? await hashPassword(input.password) : null;

  const { organization, user } = await db.$transaction(async (tx) => {
    const organizations = await tx.organization.count();
    if (organizations > 0 && !input.another) {
      throw new BootstrapRefused(`this database already has ${organizations} organization(s); to add one more, pass --another-org`);
    }
    const existing = await tx.user.findUnique({ where: { email } });
    if (existing) await refuseUnlessProven(existing, input.password);
    const organization = await tx.organization.create({ data: { id: newId('organization'), name: input.organizationName } });
    const user = existing ?? (await tx.user.create({ data: { id: newId('user'), email, passwordHash } }));
    await tx.membership.create({ data: { id: newId('membership'), organizationId: organization.id, userId: user.id, role: 'admin' } });
    return { organization, user };
  });

  const { token } = await createSession(db, user.id, organization.id);
  const { key, apiKey } = await createApiKey(db, {
    organizationId: organization.id,
    name: 'bootstrap',
    scopes: SCOPES,
    createdById: user.id,
  });

  return {
    organizationId: organization.id,
    organizationName: organization.name,
    userId: user.id,
    email,
    sessionToken: token,
    apiKey: key,
    apiKeyId: apiKey.id,
    scopes: [...SCOPES],
  };
}

/** An existing user is reused only with their own password, or, having none, with none given. */
async function refuseUnlessProven(user: { email: string; passwordHash: string | null }, password: string | undefined) {
  if (!user.passwordHash && password) {
    throw new BootstrapRefused(`${user.email} already has an account, whose password bootstrap never sets; drop --password`);
  }
  if (user.passwordHash && !(password && (await verifyPassword(password, user.passwordHash)))) {
    throw new BootstrapRefused(
      `${user.email} already has an account: give its current password with --password (bootstrap never changes it)`,
    );
  }
}
