import { type ChildProcess, spawn } from 'node:child_process';

export { freePort } from '../../test/helpers/processes.js';

/** Child processes started by a benchmark; all are stopped (by handle) when it ends. */
export class Processes {
  private readonly children: ChildProcess[] = [];

  start(command: string, args: string[], env: Record<string, string> = {}, quiet = true): ChildProcess {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: quiet ? 'ignore' : 'inherit' });
    this.children.push(child);
    return child;
  }

  async stopAll(): Promise<void> {
    await Promise.all(
      this.children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
          }),
      ),
    );
  }
}

/** Polls until `url` answers 2xx (with an optional Host header), bounded by `timeoutMs`. */
export async function waitUntilUp(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (
      await fetch(url, { signal: AbortSignal.timeout(1_000) }).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not come up within ${timeoutMs} ms`);
}
