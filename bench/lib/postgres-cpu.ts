import { existsSync, readFileSync } from 'node:fs';
import type { Db } from '../../control-plane/db/client.js';
import { sqlOf } from '../../control-plane/db/sql.js';
import { Prisma } from '../../generated/prisma/sqlite/client.js';

/**
 * The CPU that a PostgreSQL database's backends (the server processes serving its connections)
 * spend over a stretch of work, read from `/proc` as the server runs on this machine. Connections
 * come and go while the work runs, so the backends are listed again at each `sample`: one first
 * seen after `start` counts from its birth, one gone counts to its last sample. Undefined when
 * the server's processes are not readable here (a server on another machine).
 */
export class BackendCpu {
  /** Per backend: its CPU when first counted, and when last sampled (ms). */
  private readonly seen = new Map<number, { from: number; last: number }>();

  private constructor(private readonly db: Db) {}

  static async start(db: Db): Promise<BackendCpu | undefined> {
    const tally = new BackendCpu(db);
    const pids = await tally.backends();
    if (pids.length === 0 || !pids.every(isPostgresHere)) return undefined;
    for (const pid of pids) {
      const ms = onCpuMs(pid);
      tally.seen.set(pid, { from: ms, last: ms });
    }
    return tally;
  }

  /** Reads every backend's CPU now (and finds those opened since the last sample). */
  async sample(): Promise<void> {
    for (const pid of await this.backends()) {
      if (!this.seen.has(pid)) this.seen.set(pid, { from: 0, last: 0 });
    }
    for (const [pid, counted] of this.seen) {
      try {
        counted.last = onCpuMs(pid);
      } catch {
        // The connection closed: its CPU up to the last sample stays counted.
      }
    }
  }

  /** The backends' CPU between `start` and the last sample, in ms. */
  total(): number {
    let ms = 0;
    for (const { from, last } of this.seen.values()) ms += last - from;
    return ms;
  }

  private async backends(): Promise<number[]> {
    const rows = await sqlOf(this.db).all<{ pid: unknown }>(
      Prisma.sql`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`,
    );
    return rows.map((row) => Number(row.pid));
  }
}

/**
 * The time a process has run on a CPU, in ms: the scheduler's own count, to the nanosecond
 * (`/proc/<pid>/schedstat`), where `/proc/<pid>/stat` counts in ticks of 10 ms, too coarse for a
 * backend that runs a few hundred microseconds at a time.
 */
function onCpuMs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

function isPostgresHere(pid: number): boolean {
  const comm = `/proc/${pid}/comm`;
  return existsSync(comm) && readFileSync(comm, 'utf8').trim() === 'postgres';
}
