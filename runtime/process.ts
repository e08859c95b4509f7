import type { Logger } from 'pino';

/**
 * Runs a process's main function: expected start-up failures (bad configuration, unreachable
 * database, failed migration, taken port) print one line and exit 1; nothing prints a stack.
 */
export async function runMain(name: string, main: () => Promise<void>, exitCode: (err: unknown) => number = () => 1): Promise<void> {
  try {
    await main();
  } catch (err) {
    process.stderr.write(`hub ${name}: ${oneLine(err)}\n`);
    process.exit(exitCode(err));
  }
}

export function oneLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n')[0]!.trim();
}

/**
 * Calls `stop` once on SIGTERM or SIGINT (or, with `whenOrphaned`, when the process that started
 * this one is gone), then exits; a second signal exits at once.
 */
export function onShutdownSignal(logger: Logger, stop: () => Promise<void>, options: { whenOrphaned?: boolean } = {}): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals | 'parent exited') => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, 'shutting down');
    stop().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
  if (options.whenOrphaned) onParentExit(() => handle('parent exited'));
}

/**
 * Calls `then` once when this process is orphaned. A wrapper that dies without passing on its
 * signal (`npm start` on SIGTERM, a killed supervisor) would otherwise leave hub running with
 * its ports held; the parent's pid changing is the portable sign. Only for parents that own hub's
 * lifetime: a shell that started `nohup hub start &` may exit and leave hub running on purpose.
 */
export function onParentExit(then: () => void, intervalMs = 500): void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    then();
  }, intervalMs);
  timer.unref();
}
