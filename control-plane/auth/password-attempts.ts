import { randomBytes } from 'node:crypto';
import type { User } from '../../generated/prisma/sqlite/client.js';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import type { Db, Provider } from '../db/client.js';
import { takeTurns } from '../db/take-turns.js';
import { hashPassword, verifyPassword } from './password.js';

/**
 * Password checks, throttled per account and per client address: at most 10 that did not
 * succeed in any 15 minutes for either, then 429 `rate_limited` with `retryAfterSeconds` for
 * every check, the right password included, until the oldest of those ten is 15 minutes old.
 *
 * Each check is written down (`PasswordAttempt`) before the password is looked at and removed
 * once it succeeds, so the count lives in the database (every control-plane sees the same one)
 * and checks running at once count each other: twenty guesses sent together get ten answers,
 * not twenty. The row goes only when its own check succeeds; nothing else clears a count, or
 * an attacker could interleave guesses at someone's password with sign-ins to an account of
 * their own and never reach the limit. Failures simply age out.
 */
export const PASSWORD_FAILURE_LIMIT = 10;
export const PASSWORD_FAILURE_WINDOW_MS = 15 * 60 * 1000;

export type PasswordCheck = { email: string; address: string; password: string };

/**
 * A password hash nobody knows, checked when the email is unknown, so that a wrong email takes
 * as long as a wrong password and sign-in does not reveal which emails have accounts.
 */
let decoyHash: Promise<string> | undefined;
const decoy = () => (decoyHash ??= hashPassword(randomBytes(16).toString('hex')));

/** The user of `email` when `password` is theirs; else 401 `invalid_credentials` (or 429 first). */
export async function checkPassword(db: Db, provider: Provider, check: PasswordCheck): Promise<User> {
  const attemptId = await recordAttempt(db, provider, check);
  const found = await db.user.findUnique({ where: { email: check.email } });
  const ok = await verifyPassword(check.password, found?.passwordHash ?? (await decoy()));
  if (!found?.passwordHash || !ok) {
    await db.passwordAttempt.deleteMany({ where: { createdAt: { lt: windowStart() } } });
    throw new ApiError('invalid_credentials');
  }
  await db.passwordAttempt.delete({ where: { id: attemptId } });
  return found;
}

const windowStart = (now = Date.now()) => new Date(now - PASSWORD_FAILURE_WINDOW_MS);

/** Counts the attempts on both keys and, when both have room, writes this one; else refuses. */
async function recordAttempt(db: Db, provider: Provider, check: PasswordCheck): Promise<string> {
  const id = newId('passwordAttempt');
  await db.$transaction(async (tx) => {
    await takeTurns(tx, provider, `password-email:${check.email}`, `password-address:${check.address}`);
    const now = Date.now();
    const retryAfterSeconds = Math.max(
      await secondsUntilRoom(tx, { email: check.email }, now),
      await secondsUntilRoom(tx, { address: check.address }, now),
    );
    if (retryAfterSeconds > 0) {
      throw new ApiError('rate_limited', 'Too many wrong passwords; try again later.', { retryAfterSeconds });
    }
    await tx.passwordAttempt.create({ data: { id, email: check.email, address: check.address, createdAt: new Date(now) } });
  });
  return id;
}

/** 0 while the key has room; else the seconds until the oldest attempt that fills it ages out. */
async function secondsUntilRoom(tx: Pick<Db, 'passwordAttempt'>, key: { email: string } | { address: string }, now: number) {
  const filling = await tx.passwordAttempt.findFirst({
    where: { ...key, createdAt: { gt: windowStart(now) } },
    orderBy: { createdAt: 'desc' },
    skip: PASSWORD_FAILURE_LIMIT - 1,
    select: { createdAt: true },
  });
  return filling ? Math.max(1, Math.ceil((filling.createdAt.getTime() + PASSWORD_FAILURE_WINDOW_MS - now) / 1000)) : 0;
}
