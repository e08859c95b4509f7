import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HubConfig } from '../shared/config.js';
import { ConfigError, parseMasterKey } from '../shared/config.js';

const DEV_KEY_FILE = 'master.key';

/** Where a development master key is kept: in the data directory, created on first start. */
export function masterKeyFile(config: HubConfig): string {
  return join(config.dataDir, DEV_KEY_FILE);
}

/**
 * The master key that encrypts secrets at rest. Production must set HUB_MASTER_KEY; elsewhere a
 * key is generated once into the data directory (mode 0600) so that `npm start` needs no set-up.
 * A key in the environment and a different one in that file is an error rather than a choice:
 * only one of them opens the database's secrets, and guessing wrong breaks every seller.
 */
export function resolveMasterKey(config: HubConfig): Buffer {
  const file = masterKeyFile(config);
  const stored = existsSync(file) ? readKeyFile(file) : undefined;
  if (config.masterKey) {
    if (stored && !stored.equals(config.masterKey)) {
      throw new ConfigError(
        `HUB_MASTER_KEY differs from the key in ${file}: keep the one this database was sealed with and remove the other`,
      );
    }
    return config.masterKey;
  }
  if (config.env === 'production') throw new ConfigError('HUB_MASTER_KEY is required in production');
  if (stored) return stored;
  mkdirSync(config.dataDir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  return key;
}

function readKeyFile(file: string): Buffer {
  const key = parseMasterKey(readFileSync(file, 'utf8'));
  if (!key) throw new ConfigError(`${file} does not hold a 32-byte key; restore it from a backup or set HUB_MASTER_KEY`);
  return key;
}

/**
 * Writes a replacement development key beside the current one; `commit` renames it over the
 * current one. A crash in between leaves both keys on disk, so neither is lost.
 */
export function stageMasterKeyFile(config: HubConfig, key: Buffer): { path: string; commit: () => void } {
  const path = masterKeyFile(config);
  mkdirSync(config.dataDir, { recursive: true });
  writeFileSync(`${path}.next`, `${key.toString('hex')}\n`, { mode: 0o600 });
  return { path, commit: () => renameSync(`${path}.next`, path) };
}

/**
 * The bearer token the proxy presents to the control-plane's internal API. Unless set, it is
 * derived from the master key, so two processes sharing the key share the token.
 */
export function resolveInternalToken(config: HubConfig, masterKey: Buffer): string {
  return config.internalToken ?? createHmac('sha256', masterKey).update('hub internal api token v1').digest('base64url');
}
