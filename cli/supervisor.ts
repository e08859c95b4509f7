import { type ChildProcess, spawn } from 'node:child_process';
import { onParentExit } from '../runtime/process.js';

/**
 * `hub start`: runs the control-plane and the proxy as separate processes, restarts one that
 * crashes (with backoff), and forwards SIGTERM/SIGINT so both shut down gracefully; it does the
 * same when whatever started it (`npm start`) exits without passing the signal on.
 * A process that fails within its first seconds on its first run is a start-up error
 * (bad configuration, taken port): the supervisor then stops everything and exits 1.
 */
const STARTUP_WINDOW_MS = 4_000;
const MAX_BACKOFF_MS = 30_000;
const HEALTHY_AFTER_MS = 60_000;

type Role = 'control-plane' | 'proxy';

/** Set in each child's environment: a child whose parent is no longer this pid stops. */
export const SUPERVISOR_PID = 'HUB_SUPERVISOR_PID';

export function supervise(bin: string, roles: Role[]): Promise<number> {
  return new Promise((resolve) => {
    const children = new Map<Role, ChildProcess>();
    let stopping = false;
    let exitCode = 0;

    const finishIfDone = () => {
      if (stopping && children.size === 0) resolve(exitCode);
    };

    const stopAll = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      for (const child of children.values()) child.kill(signal);
      finishIfDone();
    };

    const launch = (role: Role, attempt: number, firstRun: boolean) => {
      const startedAt = Date.now();
      const child = spawn(process.execPath, [bin, 'start', role], {
        stdio: 'inherit',
        env: { ...process.env, [SUPERVISOR_PID]: String(process.pid) },
      });
      children.set(role, child);
      child.on('exit', (code, signal) => {
        children.delete(role);
        if (stopping) return finishIfDone();
        const ranFor = Date.now() - startedAt;
        if (firstRun && ranFor < STARTUP_WINDOW_MS) {
          process.stderr.write(`hub: ${role} failed to start (exit ${code ?? signal}); stopping\n`);
          exitCode = 1;
          return stopAll('SIGTERM');
        }
        const nextAttempt = ranFor > HEALTHY_AFTER_MS ? 0 : attempt + 1;
        const delay = Math.min(MAX_BACKOFF_MS, 500 * 2 ** nextAttempt);
        process.stderr.write(`hub: ${role} exited (${code ?? signal}); restarting in ${delay} ms\n`);
        setTimeout(() => {
          if (!stopping) launch(role, nextAttempt, false);
        }, delay).unref();
      });
    };

    process.on('SIGTERM', () => stopAll('SIGTERM'));
    process.on('SIGINT', () => stopAll('SIGTERM'));
    // Under an npm script, npm owns hub's lifetime; a plain shell's `&` or nohup does not.
    if (process.env.npm_lifecycle_event) onParentExit(() => stopAll('SIGTERM'));
    for (const role of roles) launch(role, 0, true);
  });
}
