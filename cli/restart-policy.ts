import type { HubConfig } from '../shared/config.js';

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

/** The one line a restart logs: how the process ended, how long it ran, and the wait chosen and why. */
export function describeRestart(
  role: string,
  exit: { code: number | null; signal: NodeJS.Signals | null },
  ranForMs: number,
  restart: Restart,
  policy: RestartPolicy,
): string {
  const how = exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
  const ran = `after ${(ranForMs / 1000).toFixed(1)} s`;
  const why =
    restart.crashLoop === 0
      ? `it had run ${policy.healthyAfterMs / 1000} s or more: restarting at once`
      : `exit ${restart.crashLoop} in a row within ${policy.healthyAfterMs / 1000} s of starting: restarting in ${restart.delayMs} ms`;
  return `hub: ${role} exited (${how}) ${ran}; ${why}`;
}
