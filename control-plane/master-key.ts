import { ConfigError } from '../shared/config.js';
import { openSecret, sealSecret } from '../shared/secret-box.js';
import type { Db } from './db/client.js';

/**
 * The master key against the database: signing secrets and encryption keys' private halves are
 * sealed under it, and a key that does not open them would let hub start and then fail every
 * signed call. Start-up checks one sealed value (all are sealed under the same key: rotation
 * re-seals every one in one transaction).
 */
export async function assertMasterKeyOpensSecrets(db: Db, masterKey: Buffer, databaseName: string): Promise<void> {
  const newest = [{ createdAt: 'desc' }, { id: 'desc' }] as const;
  const secret = await db.signingSecret.findFirst({ select: { encryptedSecret: true }, orderBy: [...newest] });
  const sealed =
    secret?.encryptedSecret ??
    (await db.encryptionKey.findFirst({ select: { encryptedPrivateKey: true }, orderBy: [...newest] }))?.encryptedPrivateKey;
  if (!sealed || opens(masterKey, sealed)) return;
  throw new ConfigError(
    `the master key does not open the secrets sealed in ${databaseName}: start hub with the key this database was created with ` +
      '(HUB_MASTER_KEY, or master.key in the data directory); to change keys, use `hub rotate-key` with the old one',
  );
}

/** Re-seals every secret from one key to another, all or nothing; returns how many. */
export async function resealSecrets(db: Db, from: Buffer, to: Buffer): Promise<number> {
  return db.$transaction(async (tx) => {
    const reseal = (sealed: string) => {
      if (!opens(from, sealed)) throw new ConfigError('the current master key does not open every sealed secret; nothing was changed');
      return sealSecret(to, openSecret(from, sealed));
    };
    const secrets = await tx.signingSecret.findMany({ select: { id: true, encryptedSecret: true } });
    for (const row of secrets) {
      await tx.signingSecret.update({ where: { id: row.id }, data: { encryptedSecret: reseal(row.encryptedSecret) } });
    }
    const keys = await tx.encryptionKey.findMany({ select: { id: true, encryptedPrivateKey: true } });
    for (const row of keys) {
      await tx.encryptionKey.update({ where: { id: row.id }, data: { encryptedPrivateKey: reseal(row.encryptedPrivateKey) } });
    }
    return secrets.length + keys.length;
  });
}

function opens(key: Buffer, sealed: string): boolean {
  try {
    openSecret(key, sealed);
    return true;
  } catch {
    return false;
  }
}
