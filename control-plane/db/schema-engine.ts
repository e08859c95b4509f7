import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { bindMigrationAwareSqlAdapterFactory, type SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { migrationsDir, type Provider, schemaFiles } from './schema-files.js';

/**
 * Prisma's schema engine compiled to WebAssembly, driven through our own driver adapters.
 * hub uses it only to diff a database against the models (creating and checking migrations)
 * without Prisma's native engine binary; applying them is `migrate.ts`'s job.
 */

type Bindings = typeof import('@prisma/schema-engine-wasm/schema_engine_bg');
export type SchemaEngine = Awaited<ReturnType<Bindings['SchemaEngine']['new']>>;

let bindings: Promise<Bindings> | undefined;

/** The slice of the WebAssembly global we use (Node has it; our `lib` setting does not declare it). */
const wasm = (
  globalThis as unknown as {
    WebAssembly: { instantiate(bytes: Uint8Array, imports: object): Promise<{ instance: { exports: Record<string, unknown> } }> };
  }
).WebAssembly;

/** The package expects a bundler to load its .wasm; on plain Node we instantiate it ourselves. */
function loadBindings(): Promise<Bindings> {
  bindings ??= (async () => {
    const require = createRequire(import.meta.url);
    const glue: Bindings = await import('@prisma/schema-engine-wasm/schema_engine_bg');
    // The .wasm file is not in the package's exports map: find it beside the glue module.
    const wasmPath = join(dirname(require.resolve('@prisma/schema-engine-wasm/schema_engine_bg')), 'schema_engine_bg.wasm');
    const { instance } = await wasm.instantiate(readFileSync(wasmPath), { './schema_engine_bg.js': withUnrefTimers(glue) });
    glue.__wbg_set_wasm(instance.exports);
    (instance.exports as { __wbindgen_start: () => void }).__wbindgen_start();
    return glue;
  })();
  return bindings;
}

/**
 * The engine arms long timers (connection housekeeping) that would keep a finished CLI or test
 * process alive for seconds; they never need to, so they are unref'd.
 */
function withUnrefTimers(glue: Bindings): Record<string, unknown> {
  const imports: Record<string, unknown> = { ...glue };
  for (const [name, value] of Object.entries(glue)) {
    if (name.startsWith('__wbg_setTimeout') && typeof value === 'function') {
      imports[name] = (...args: unknown[]) => {
        const timer = (value as (...a: unknown[]) => unknown)(...args);
        (timer as { unref?: () => void } | undefined)?.unref?.();
        return timer;
      };
    }
  }
  return imports;
}

export const noFilters = { externalTables: [], externalEnums: [] };

export async function openSchemaEngine(
  provider: Provider,
  factory: SqlMigrationAwareDriverAdapterFactory,
  files = schemaFiles(provider),
): Promise<SchemaEngine> {
  const glue = await loadBindings();
  return glue.SchemaEngine.new(
    { datamodels: files.map((f) => [f.path, f.content]) },
    () => {},
    bindMigrationAwareSqlAdapterFactory(factory),
  );
}

/** SQL that takes the connected database to the current models ('' when they already agree). */
export async function pendingSchemaChange(engine: SchemaEngine, provider: Provider, files = schemaFiles(provider)): Promise<string> {
  const result = await engine.diff({
    from: { tag: 'schemaDatasource', files, configDir: migrationsDir(provider) },
    to: { tag: 'schemaDatamodel', files },
    script: true,
    exitCode: null,
    filters: noFilters,
  });
  const sql = result.stdout ?? '';
  return /^\s*(--[^\n]*\n?\s*)*$/.test(sql) ? '' : sql;
}
