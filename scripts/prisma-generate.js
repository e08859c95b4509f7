// Generates the two Prisma clients (SQLite and PostgreSQL) from prisma/models.prisma.
// `prisma generate` does not use the native schema engine, but insists that one exists;
// pointing it at a stub keeps generation fully offline.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const providers = ['sqlite', 'postgresql'];

function stubEngine() {
  if (process.env.PRISMA_SCHEMA_ENGINE_BINARY && existsSync(process.env.PRISMA_SCHEMA_ENGINE_BINARY)) {
    return process.env.PRISMA_SCHEMA_ENGINE_BINARY;
  }
  const file = join(mkdtempSync(join(tmpdir(), 'hub-prisma-')), 'schema-engine');
  writeFileSync(file, '#!/bin/sh\nexit 1\n');
  chmodSync(file, 0o755);
  return file;
}

const env = { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: stubEngine(), PRISMA_HIDE_UPDATE_MESSAGE: '1' };
for (const provider of providers) {
  const config = join(root, 'prisma', provider, 'prisma.config.ts');
  if (!existsSync(config)) continue;
  const result = spawnSync(process.execPath, [join(root, 'node_modules', 'prisma', 'build', 'index.js'), 'generate', '--config', config], {
    cwd: root,
    env,
    stdio: 'inherit',
  });
  if (result.status !== 0) {
    console.error(`prisma generate failed for ${provider}`);
    process.exit(result.status ?? 1);
  }
}
