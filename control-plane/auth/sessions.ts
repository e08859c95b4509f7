import { newId } from '../../shared/ids.js';
import { hashToken, newToken } from '../../shared/tokens.js';
import type { Db } from '../db/client.js';

export const SESSION_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;

/** Opens a dashboard session; returns the bearer token, which is stored only as a hash. */
export async function createSession(db: Db, userId: string, currentOrganizationId: string | null) {
  const token = newToken('session');
  const session = await db.session.create({
    data: {
      id: newId('session'),
      tokenHash: hashToken(token),
      userId,
      currentOrganizationId,
      expiresAt: new Date(Date.now() + SESSION_LIFETIME_MS),
    },
  });
  return { token, session };
}
