import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { findOrInstall } from './debian-package.js';

const run = promisify(execFile);

export type LoadResult = { rps: number; requests: number; p50ms: number; p99ms: number; errors: number };

/**
 * Drives `url` with wrk (one thread, fixed connections and duration) and reads its summary.
 * `script` names a wrk Lua script that builds the requests (method, body), when GETs will not do.
 */
export async function wrk(
  url: string,
  options: { connections: number; seconds: number; headers?: Record<string, string>; script?: string },
): Promise<LoadResult> {
  const args = ['-t1', `-c${options.connections}`, `-d${options.seconds}s`, '--latency'];
  for (const [name, value] of Object.entries(options.headers ?? {})) args.push('-H', `${name}: ${value}`);
  if (options.script) args.push('-s', options.script);
  const { stdout } = await run('wrk', [...args, url], { timeout: (options.seconds + 30) * 1000 });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? NaN);
  const requests = Number(/(\d+) requests in/.exec(stdout)?.[1] ?? NaN);
  const p50ms = toMs(/\s50%\s+([\d.]+\w+)/.exec(stdout)?.[1]);
  const p99ms = toMs(/\s99%\s+([\d.]+\w+)/.exec(stdout)?.[1]);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout)?.[1] ?? 0);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const errors = non2xx + (socketErrors ? socketErrors.slice(1).reduce((a, b) => a + Number(b), 0) : 0);
  return { rps, requests, p50ms, p99ms, errors };
}

function toMs(value: string | undefined): number {
  if (!value) return NaN;
  const m = /^([\d.]+)(us|ms|s)$/.exec(value);
  if (!m) return NaN;
  const n = Number(m[1]);
  return m[2] === 'us' ? n / 1000 : m[2] === 's' ? n * 1000 : n;
}

/** wrk, found or installed from Debian's package of that name; a benchmark cannot run without it. */
export async function requireWrk(log: (line: string) => void): Promise<void> {
  if (!(await findOrInstall('wrk', 'wrk', log))) throw new Error('wrk is needed (apt-get install wrk)');
}
