import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { RecovererChoice } from './recoverer.js';
import type { SignerRecovery } from './signer-recovery.js';

/**
 * Signer recovery on a Piscina worker pool. A round trip to a worker costs more than a native
 * recovery (digest included), so with the native backend the pool lowers throughput; it pays off
 * for the pure-JS backend (milliseconds per signature), keeping the event loop free.
 * `defaultSignerRecovery` chooses accordingly; bench/recover.ts measures both.
 */

export type RecoverPoolOptions = { threads?: number; idleTimeoutMs?: number; backend?: RecovererChoice };

export function createRecoverPool(options: RecoverPoolOptions = {}): SignerRecovery {
  const threads = options.threads ?? Math.max(1, availableParallelism() - 1);
  const pool = new Piscina({
    filename: workerFile().href,
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: options.idleTimeoutMs ?? 30_000,
    execArgv: workerExecArgv(),
    workerData: { backend: options.backend ?? 'default' },
  });
  return {
    name: `pool(${threads}):${options.backend ?? 'default'}`,
    recoverSigner: (input) => pool.run(input),
    close: () => pool.destroy(),
  };
}

/** The worker module next to this one, in whichever form this one runs (TypeScript through tsx, or built JS). */
function workerFile(): URL {
  const extension = /\.[cm]?[jt]s$/.exec(new URL(import.meta.url).pathname)?.[0] ?? '.js';
  return new URL(`./recover-worker${extension}`, import.meta.url);
}

/**
 * Workers inherit the command line's `--import tsx` but not a loader registered from code, as
 * `bin/hub.js` registers it; a worker that must load TypeScript then gets tsx passed explicitly.
 */
function workerExecArgv(): string[] {
  const inherited = process.execArgv;
  if (!import.meta.url.endsWith('.ts') || inherited.some((arg) => arg.includes('tsx'))) return inherited;
  return [...inherited, '--import', import.meta.resolve('tsx')];
}
