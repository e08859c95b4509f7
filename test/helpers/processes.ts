import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

type Tap = { teardown: (fn: () => unknown) => void };

/** The `hub` command: `bin/hub.js`, or its compiled form when the test runner compiled the tree (D-210). */
export const hubBin = process.env.HUB_TEST_HUB_BIN || join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'hub.js');

/** A port that was free a moment ago (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** An empty data directory and SQLite URL of its own, removed after the test. */
export function tempDataDir(t: Tap): { dataDir: string; databaseUrl: string } {
  const dataDir = mkdtempSync(join(tmpdir(), 'hub-proc-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  return { dataDir, databaseUrl: `file:${join(dataDir, 'hub.db')}` };
}

export type RunningHub = { child: ChildProcess; stdout: () => string; stderr: () => string; exited: Promise<number | null> };

/**
 * Runs `hub <args>` as a child process; it is killed at teardown if still running. Its proxy is
 * one process unless `env` says otherwise: each worker costs a start-up's CPU, and only the
 * tests of the workers themselves need more (test/cli/proxy-workers.test.ts); a variable given
 * as undefined is left out (hub then takes its default).
 */
export function runHub(t: Tap, args: string[], env: Record<string, string | undefined>): RunningHub {
  const child = spawn(process.execPath, [hubBin, ...args], {
    env: { ...process.env, HUB_LOG_LEVEL: 'warn', HUB_PROXY_WORKERS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  // 'exit' can come before the last of the output is read: the exit code waits for both streams to
  // end, which they do once the process (and any child of its holding them) is gone; a quarter of a
  // second at most, since a child that outlives a killed `hub start` holds them open (a second cost
  // start.test.ts twelve seconds).
  const ended = (stream: Readable) => new Promise<void>((resolve) => (stream.closed ? resolve() : stream.once('close', () => resolve())));
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      const bound = setTimeout(() => resolve(code), 250);
      void Promise.all([ended(child.stdout!), ended(child.stderr!)]).then(() => {
        clearTimeout(bound);
        resolve(code);
      });
    }),
  );
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return { child, stdout: () => out, stderr: () => err, exited };
}

/**
 * `hub bootstrap` run as an operator runs it against the database `env` names: the first
 * organization, its owner's session token and an all-scopes API key.
 */
export async function bootstrapHub(env: Record<string, string>, org: string): Promise<{ apiKey: string; sessionToken: string }> {
  const args = [hubBin, 'bootstrap', '--email', 'owner@example.com', '--org', org, '--json'];
  const { stdout } = await promisify(execFile)(process.execPath, args, { env: { ...process.env, ...env } });
  return JSON.parse(stdout) as { apiKey: string; sessionToken: string };
}

/** Polls `url` until it answers `status` or `timeoutMs` passes (bounded). */
export async function waitForStatus(url: string, status: number, timeoutMs = 30_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const got = await fetch(url, { signal: AbortSignal.timeout(1_000) }).then(
      (r) => r.status,
      () => 0,
    );
    if (got === status) return true;
    await new Promise((r) => setTimeout(r, 150));
  }
  return false;
}

/** Resolves with the exit code, or null when the process is still running after `timeoutMs`. */
export function exitWithin(hub: RunningHub, timeoutMs: number): Promise<number | null | 'timeout'> {
  return Promise.race([hub.exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), timeoutMs).unref())]);
}

/**
 * The pids of `pid`'s hub processes running `start <role>` (`hub start`'s control-plane and proxy,
 * or a proxy's workers), leaving out its other children, such as tsx's esbuild service.
 */
export function childPids(pid: number, role: 'control-plane|proxy' | 'proxy' = 'control-plane|proxy'): number[] {
  const out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((line) => new RegExp(` start (${role})$`).test(line.trim()))
    .map((line) => Number(line.trim().split(/\s+/, 1)[0]));
}

/** Polls until `condition` holds or `timeoutMs` passes (bounded); whether it held. */
export async function eventually(condition: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<boolean> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
    if (await condition()) return true;
  }
  return condition();
}
