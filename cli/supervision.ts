import cluster from 'node:cluster';

/**
 * What `hub start`'s supervisor and the processes it runs tell each other: it through their
 * environment, they through their exit code (a module of its own so that reading it loads
 * nothing else).
 */

/** The supervisor's pid: a child whose parent is no longer that pid stops. */
export const SUPERVISOR_PID = 'HUB_SUPERVISOR_PID';

/** Set on the local chain `hub start` runs itself in development. */
export const DEV_CHAIN_OF_START = 'HUB_DEV_CHAIN_OF_START';

/**
 * Started by `hub start`'s supervisor, which owns this process's lifetime; or a proxy worker,
 * whose primary owns it and reads its exit code the same way (cli/proxy-workers.ts).
 */
export function supervised(): boolean {
  return process.env[SUPERVISOR_PID] === String(process.ppid) || cluster.isWorker;
}

/**
 * The exit code of a supervised process that stopped on its configuration (a master key that
 * does not open the database, a setting it refuses): starting it again cannot help, however long
 * it took to find out, so the supervisor stops hub instead of restarting it. sysexits' EX_CONFIG.
 */
export const CONFIG_ERROR_EXIT = 78;
