import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type { Database } from 'better-sqlite3';

/**
 * `factory` with `patch` applied to the better-sqlite3 connection of every adapter it connects.
 * That connection is not part of the adapter's typed interface: an adapter without one is used as
 * it is.
 */
export function patchSqliteClient(
  factory: SqlMigrationAwareDriverAdapterFactory,
  patch: (client: Database) => void,
): SqlMigrationAwareDriverAdapterFactory {
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => {
      const adapter = await factory.connect();
      const client = (adapter as unknown as { client?: Partial<Database> }).client;
      if (typeof client?.prepare === 'function') patch(client as Database);
      return adapter;
    },
    connectToShadowDb: () => factory.connectToShadowDb(),
  };
}
