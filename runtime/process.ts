import type { Logger } from 'pino';

/**
 * Runs a process's main function: expected start-up failures (bad configuration, unreachable
 * database, failed migration, taken port) print one line and exit 1; nothing prints a stack.
 */
export async function runMain(name: string, main: () => Promise<void>): Promise<void> {
  try {
    await main();
  } catch (err) {
    process.stderr.write(`hub ${name}: ${oneLine(err)}\n`);
    process.exit(1);
  }
}

export function oneLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n')[0]!.trim();
}

/** Calls `stop` once on SIGTERM or SIGINT, then exits; a second signal exits at once. */
export function onShutdownSignal(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
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
}
