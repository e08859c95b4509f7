import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { adapterFactory } from '../control-plane/db/adapter.js';
import { migrateDatabase } from '../control-plane/db/migrate.js';
import { openSchemaEngine, type SchemaEngine } from '../control-plane/db/schema-engine.js';
import { type Provider, schemaFiles } from '../control-plane/db/schema-files.js';

/**
 * A throw-away database of each provider with the committed migrations applied (by hub's own
 * applier, so this also proves they apply), for creating and checking migrations offline:
 * a temporary SQLite file, or an in-memory PostgreSQL (PGlite) served on a loopback port.
 */
export async function withScratchEngine<T>(
  provider: Provider,
  work: (engine: SchemaEngine) => Promise<T>,
  files = schemaFiles(provider),
): Promise<T> {
  if (provider === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'hub-scratch-'));
    const file = join(dir, 'scratch.db');
    const database = { provider: 'sqlite' as const, url: `file:${file}`, file };
    await migrateDatabase(database);
    const engine = await openSchemaEngine('sqlite', adapterFactory(database, { forSchemaEngine: true }).factory, files);
    try {
      return await work(engine);
    } finally {
      engine.free();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const pglite = await PGlite.create();
  const server = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port: 0 });
  await server.start();
  const url = `postgresql://postgres@${server.getServerConn()}/postgres?sslmode=disable`;
  await migrateDatabase({ provider: 'postgresql', url });
  const { factory, dispose } = adapterFactory({ provider: 'postgresql', url }, { poolSize: 1, forSchemaEngine: true });
  const engine = await openSchemaEngine('postgresql', factory, files);
  try {
    return await work(engine);
  } finally {
    engine.free();
    await dispose();
    await server.stop();
    await pglite.close();
  }
}
