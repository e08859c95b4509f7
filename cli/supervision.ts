/**
 * What `hub start`'s supervisor tells the processes it runs, through their environment (a module
 * of its own so that reading it loads nothing else).
 */

/** The supervisor's pid: a child whose parent is no longer that pid stops. */
export const SUPERVISOR_PID = 'HUB_SUPERVISOR_PID';

/** Set on the local chain `hub start` runs itself in development. */
export const DEV_CHAIN_OF_START = 'HUB_DEV_CHAIN_OF_START';

/** Started by `hub start`'s supervisor, which owns this process's lifetime. */
export function supervised(): boolean {
  return process.env[SUPERVISOR_PID] === String(process.ppid);
}
