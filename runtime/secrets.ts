import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HubConfig } from '../shared/config.js';
import { ConfigError } from '../shared/config.js';

const DEV_KEY_FILE = 'master.key';

/**
 * The master key that encrypts secrets at rest. Production must set HUB_MASTER_KEY; elsewhere a
 * key is generated once into the data directory (mode 0600) so that `npm start` needs no set-up.
 */
export function resolveMasterKey(config: HubConfig): Buffer {
  if (config.masterKey) return config.masterKey;
  if (config.env === 'production') throw new ConfigError('HUB_MASTER_KEY is required in production');
  const file = join(config.dataDir, DEV_KEY_FILE);
  if (existsSync(file)) {
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
    if (key.length !== 32) throw new ConfigError(`${file} does not hold a 32-byte hex key; delete it or set HUB_MASTER_KEY`);
    return key;
  }
  mkdirSync(config.dataDir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  return key;
}

/**
 * The bearer token the proxy presents to the control-plane's internal API. Unless set, it is
 * derived from the master key, so two processes sharing the key share the token.
 */
export function resolveInternalToken(config: HubConfig, masterKey: Buffer): string {
  return config.internalToken ?? createHmac('sha256', masterKey).update('hub internal api token v1').digest('base64url');
}
