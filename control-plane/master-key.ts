import { ConfigError } from '../shared/config.js';
import { openSecret, sealSecret } from '../shared/secret-box.js';
import type { Db } from './db/client.js';

/**
 * The master key against the database: signing secrets are sealed under it, and a key that does
 * not open them would let hub start and then fail every signed call. Start-up checks one sealed
 * value (all are sealed under the same key: rotation re-seals every one in one transaction).
 */
export async function assertMasterKeyOpensSecrets(db: Db, masterKey: Buffer, databaseName: string): Promise<void> {
  const sealed = await db.signingSecret.findFirst({ select: { encryptedSecret: true }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
  if (!sealed || opens(masterKey, sealed.encryptedSecret)) return;
  throw new ConfigError(
    `the master key does not open the secrets sealed in ${databaseName}: start hub with the key this database was created with ` +
      '(HUB_MASTER_KEY, or master.key in the data directory); to change keys, use `hub rotate-key` with the old one',
  );
}

/** Re-seals every secret from one key to another, all or nothing; returns how many. */
export async function resealSecrets(db: Db, from: Buffer, to: Buffer): Promise<number> {
  return db.$transaction(async (tx) => {
    const rows = await tx.signingSecret.findMany({ select: { id: true, encryptedSecret: true } });
    for (const row of rows) {
      if (!opens(from, row.encryptedSecret))
        throw new ConfigError('the current master key does not open every sealed secret; nothing was changed');
      await tx.signingSecret.update({
        where: { id: row.id },
        data: { encryptedSecret: sealSecret(to, openSecret(from, row.encryptedSecret)) },
      });
    }
    return rows.length;
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
