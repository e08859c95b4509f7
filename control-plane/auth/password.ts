import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { hubMode } from '../../shared/config.js';

/**
 * Dashboard passwords, hashed with scrypt (memory-hard, in Node's crypto).
 * Stored as `scrypt$N$r$p$<salt b64>$<hash b64>` so the cost can rise without a migration, and a
 * hash is always verified at the cost it was made with.
 */
const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number, options: object) => Promise<Buffer>;
const KEY_LENGTH = 32;
const MAX_MEMORY = 64 * 1024 * 1024;

export type ScryptCost = { N: number; r: number; p: number };

export const PRODUCTION_COST: ScryptCost = { N: 2 ** 15, r: 8, p: 1 };
/**
 * 32 times cheaper. The production cost is a tenth of a second of CPU or more a hash, as it should
 * be; a test that signs in over and over (the sign-in throttle) spent most of its time there.
 * Never for real passwords.
 */
export const CHEAP_TEST_COST: ScryptCost = { N: 2 ** 10, r: 8, p: 1 };

/** The cost new hashes are made at: the production one unless HUB_TEST_CHEAP_PASSWORD_HASH=1 outside production. */
export function passwordHashCost(env: Record<string, string | undefined> = process.env): ScryptCost {
  // Read at each hash, not once, so it follows the environment the process runs in; production ignores it.
  return env.HUB_TEST_CHEAP_PASSWORD_HASH === '1' && hubMode(env) !== 'production' ? CHEAP_TEST_COST : PRODUCTION_COST;
}

export async function hashPassword(password: string): Promise<string> {
  const { N, r, p } = passwordHashCost();
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, KEY_LENGTH, { N, r, p, maxmem: MAX_MEMORY });
  return ['scrypt', N, r, p, salt.toString('base64'), hash.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: MAX_MEMORY,
  });
  return timingSafeEqual(actual, expected);
}
