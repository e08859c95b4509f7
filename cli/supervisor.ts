import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { onParentExit } from '../runtime/process.js';
import { loadConfig } from '../shared/config.js';
import { describeRestart, judgeExit, restartPolicy } from './restart-policy.js';
import { DEV_CHAIN_OF_START, SUPERVISOR_PID } from './supervision.js';

/**
 * `hub start`: runs the control-plane and the proxy as separate processes, restarts one that
 * crashes (at once, or after a wait in a crash loop: restart-policy.ts), and forwards
 * SIGTERM/SIGINT so both shut down gracefully; it does the same when whatever started it
 * (`npm start`) exits without passing the signal on.
 * A process that exits by itself within its first seconds on its first run is a start-up error
 * (bad configuration, taken port): the supervisor then stops everything and exits 1. So does
 * one that exits with CONFIG_ERROR_EXIT, however long it ran first. The proxy runs its workers
 * itself (proxy-workers.ts) and judges their exits the same way; here it is one process.
 *
 * With `devChainFile`, a local chain (`hub chain up`) runs first, until it has written that
 * file, so the control-plane starts with it as its payment rail; it stops with the rest. A chain
 * that cannot start leaves hub running without a rail, as it would be without one.
 */
type Role = 'control-plane' | 'proxy';

const CHAIN_STARTUP_TIMEOUT_MS = 120_000;

export function supervise(bin: string, roles: Role[], options: { devChainFile?: string } = {}): Promise<number> {
  const policy = restartPolicy(loadConfig());
  return new Promise((resolve) => {
    const children = new Map<Role | 'chain', ChildProcess>();
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

    const launch = (role: Role, crashLoop: number, firstRun: boolean) => {
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
        const verdict = judgeExit({ code, signal }, ranFor, { first: firstRun, crashLoop }, policy);
        // A configuration error has said why in one line; a restart would only say it again.
        if (verdict.kind !== 'restart') {
          if (verdict.kind === 'failed-to-start') process.stderr.write(`hub: ${role} failed to start (exit ${code}); stopping\n`);
          exitCode = 1;
          return stopAll('SIGTERM');
        }
        const restart = verdict;
        process.stderr.write(`${describeRestart(role, { code, signal }, ranFor, restart, policy)}\n`);
        if (restart.delayMs === 0) return launch(role, restart.crashLoop, false);
        setTimeout(() => {
          if (!stopping) launch(role, restart.crashLoop, false);
        }, restart.delayMs).unref();
      });
    };

    /** Resolves once the chain has described itself, or has failed to (hub then runs without it). */
    const launchChain = (file: string) =>
      new Promise<void>((ready) => {
        const child = spawn(process.execPath, [bin, 'chain', 'up'], {
          stdio: 'inherit',
          env: { ...process.env, [SUPERVISOR_PID]: String(process.pid), [DEV_CHAIN_OF_START]: '1' },
        });
        children.set('chain', child);
        const deadline = Date.now() + CHAIN_STARTUP_TIMEOUT_MS;
        const poll = setInterval(() => {
          if (existsSync(file) || Date.now() > deadline || stopping) finish();
        }, 100);
        const finish = () => {
          clearInterval(poll);
          ready();
        };
        child.on('exit', (code, signal) => {
          children.delete('chain');
          finish();
          if (stopping) return finishIfDone();
          // Not restarted: a new chain would start empty, on another port than the rail knows.
          process.stderr.write(`hub: the local chain exited (${code ?? signal}); priced calls answer 503 until hub restarts\n`);
        });
      });

    process.on('SIGTERM', () => stopAll('SIGTERM'));
    process.on('SIGINT', () => stopAll('SIGTERM'));
    // Under an npm script, npm owns hub's lifetime; a plain shell's `&` or nohup does not.
    if (process.env.npm_lifecycle_event) onParentExit(() => stopAll('SIGTERM'));
    const chainReady = options.devChainFile ? launchChain(options.devChainFile) : Promise.resolve();
    void chainReady.then(() => {
      if (!stopping) for (const role of roles) launch(role, 0, true);
    });
  });
}
