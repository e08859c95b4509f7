import type { HubConfig } from '../shared/config.js';
import { CONFIG_ERROR_EXIT } from './supervision.js';

/**
 * When `hub start` restarts a process that exited. A process that had been running a while
 * crashed on something it met (a request, a lost connection): it comes back at once, however
 * often that happens, since every moment it is down the pay URL (or the API) is down with it.
 * Waiting only helps a process that cannot get going: one that dies soon after it starts, again
 * and again (a database still coming up, a port not yet free). Those restarts back off, doubling
 * up to a cap, until a run lasts a while again.
 */
export type RestartPolicy = {
  /** A run at least this long was a while: its exit is restarted at once and ends any crash loop. */
  healthyAfterMs: number;
  /** The wait after the first exit soon after start-up; each further one in a row doubles it. */
  firstBackoffMs: number;
  maxBackoffMs: number;
};

/** The policy `hub start` follows; how long a run must last to count as a while is a setting. */
export function restartPolicy(config: Pick<HubConfig, 'restart'>): RestartPolicy {
  return { healthyAfterMs: config.restart.healthyAfterMs, firstBackoffMs: 500, maxBackoffMs: 30_000 };
}

export type Restart = {
  /** How long to wait before starting the process again. */
  delayMs: number;
  /** Exits soon after start-up in a row, this one included; 0 after a run that lasted a while. */
  crashLoop: number;
};

/** The restart after a run of `ranForMs`, `crashLoop` being the count the previous restart left. */
export function nextRestart(ranForMs: number, crashLoop: number, policy: RestartPolicy): Restart {
  if (ranForMs >= policy.healthyAfterMs) return { delayMs: 0, crashLoop: 0 };
  const loop = crashLoop + 1;
  return { delayMs: Math.min(policy.maxBackoffMs, policy.firstBackoffMs * 2 ** (loop - 1)), crashLoop: loop };
}

/**
 * A process that exits by itself within this long of its first start has met a start-up error
 * (bad configuration, a taken port), which a restart would only meet again.
 */
export const STARTUP_WINDOW_MS = 4_000;

export type ExitHow = { code: number | null; signal: NodeJS.Signals | null };

/**
 * What a supervisor does when one of its processes exits unasked: stop everything (it said why
 * on its way out: a configuration error, or a start-up failure on its first run) or restart it.
 * `hub start` judges its control-plane and proxy this way, and a proxy its workers.
 */
export type ExitVerdict = { kind: 'config-error' } | { kind: 'failed-to-start' } | ({ kind: 'restart' } & Restart);

export function judgeExit(exit: ExitHow, ranForMs: number, run: { first: boolean; crashLoop: number }, policy: RestartPolicy): ExitVerdict {
  if (exit.code === CONFIG_ERROR_EXIT) return { kind: 'config-error' };
  // Exiting by itself that early is a start-up error; being killed by a signal is a crash.
  if (run.first && ranForMs < STARTUP_WINDOW_MS && exit.code !== null) return { kind: 'failed-to-start' };
  return { kind: 'restart', ...nextRestart(ranForMs, run.crashLoop, policy) };
}

/** The one line a restart logs: how the process ended, how long it ran, and the wait chosen and why. */
export function describeRestart(role: string, exit: ExitHow, ranForMs: number, restart: Restart, policy: RestartPolicy): string {
  const how = exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
  const ran = `after ${(ranForMs / 1000).toFixed(1)} s`;
  const why =
    restart.crashLoop === 0
      ? `it had run ${policy.healthyAfterMs / 1000} s or more: restarting at once`
      : `exit ${restart.crashLoop} in a row within ${policy.healthyAfterMs / 1000} s of starting: restarting in ${restart.delayMs} ms`;
  return `hub: ${role} exited (${how}) ${ran}; ${why}`;
}
