// Creates a migration for each database from the change in prisma/models.prisma:
//   npm run db:new -- <name>
// Works offline: existing migrations are replayed on a scratch database and diffed against the models.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pendingSchemaChange } from '../control-plane/db/schema-engine.js';
import { lockfileContent, migrationsDir, type Provider } from '../control-plane/db/schema-files.js';
import { withScratchEngine } from './scratch-database.js';

const name = (process.argv[2] ?? '').trim();
if (!/^[a-z0-9][a-z0-9_]{0,60}$/.test(name)) {
  console.error('usage: npm run db:new -- <name>   (lowercase letters, digits and underscores)');
  process.exit(2);
}

const stamp = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);
let created = 0;
for (const provider of ['sqlite', 'postgresql'] as Provider[]) {
  const sql = await withScratchEngine(provider, (engine) => pendingSchemaChange(engine, provider));
  if (!sql) {
    console.log(`${provider}: the migrations already match the models`);
    continue;
  }
  const dir = join(migrationsDir(provider), `${stamp}_${name}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'migration.sql'), sql.endsWith('\n') ? sql : `${sql}\n`);
  const lock = join(migrationsDir(provider), 'migration_lock.toml');
  if (!existsSync(lock)) writeFileSync(lock, lockfileContent(provider));
  console.log(`${provider}: wrote ${dir}`);
  created++;
}
if (created === 0) console.log('nothing to do');
process.exit(0);
