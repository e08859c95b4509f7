import { randomBytes } from 'node:crypto';
import pg from 'pg';

export type ScratchPostgres = { url: string; drop: () => Promise<void> };

/** The PostgreSQL server a benchmark adds its PostgreSQL rows on. */
export const benchPostgresUrl = process.env.HUB_BENCH_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

/**
 * The database a benchmark's PostgreSQL rows run on: a fresh one on the server at
 * HUB_BENCH_PG_URL (default postgresql://postgres@127.0.0.1:5432/postgres), dropped by `drop`.
 * Undefined, and said through `log`, when BENCH_POSTGRES=off or nothing answers there: the
 * benchmark then measures SQLite only.
 */
export async function benchPostgres(log: (line: string) => void): Promise<ScratchPostgres | undefined> {
  if (process.env.BENCH_POSTGRES === 'off') {
    log('PostgreSQL: skipped (BENCH_POSTGRES=off); SQLite only');
    return undefined;
  }
  const scratch = await scratchPostgres(benchPostgresUrl);
  if (!scratch) log(`PostgreSQL: nothing answers at ${benchPostgresUrl.replace(/\/\/[^@]*@/, '//')}; SQLite only`);
  return scratch;
}

/** A fresh database on the PostgreSQL server at `adminUrl`, dropped by `drop`; undefined when none answers. */
async function scratchPostgres(adminUrl: string): Promise<ScratchPostgres | undefined> {
  const name = `hub_bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 2_000 });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
  } catch {
    return undefined;
  } finally {
    await admin.end().catch(() => {});
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const cleanup = new pg.Client({ connectionString: adminUrl });
      await cleanup.connect();
      await cleanup.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await cleanup.end();
    },
  };
}
