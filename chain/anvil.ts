import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * A local anvil node from the npm package `@foundry-rs/anvil`, on loopback only. The package's own
 * launcher is a Node wrapper that forwards signals; we start the platform binary directly so the pid
 * we hold is anvil's and stopping it cannot leave an orphan behind.
 */

export type AnvilOptions = {
  /** 0 (the default) lets the OS pick a free port; anvil prints the one it bound. */
  port?: number;
  chainId?: number;
  /** Dev accounts derived from `mnemonic`, each holding `balanceEth` ether. */
  accounts?: number;
  mnemonic?: string;
  balanceEth?: number;
  /** Seconds between blocks; absent means automine (a block per transaction). */
  blockTimeSeconds?: number;
  /**
   * Past states kept (in memory only). anvil otherwise keeps every past state, spilling them to a
   * temporary folder it never clears (gigabytes over a long run). hub reads the chain at its latest
   * block only. Default 256.
   */
  keptStates?: number;
  /**
   * The EVM rules the chain runs. Default `cancun`, which hub's contracts are compiled for. From
   * Prague on, every block writes its parent's hash into the history contract of EIP-2935, and
   * anvil works out each new block's state root over all of that contract's storage: mining a
   * block then costs more with every block (an empty block took 4 ms at block 6,000 against
   * 0.04 ms under Cancun), which halves a dev chain's transfer rate within minutes of load.
   */
  hardfork?: string;
  startTimeoutMs?: number;
};

export type Anvil = {
  rpcUrl: string;
  port: number;
  pid: number;
  /** Settles when anvil exits, for whatever reason. */
  exited: Promise<void>;
  /** SIGTERM, then SIGKILL if anvil has not exited after `graceMs`. Safe to call twice. */
  stop(graceMs?: number): Promise<void>;
};

const require = createRequire(import.meta.url);
const ARCH: Partial<Record<string, string>> = { x64: 'amd64', arm64: 'arm64' };

/** The anvil executable shipped in the platform package that npm installed next to `@foundry-rs/anvil`. */
function findAnvilBinary(): string {
  const arch = ARCH[process.arch];
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch ?? process.arch}`;
  let dir: string;
  try {
    dir = dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    throw new Error(`anvil is not installed for ${process.platform}/${process.arch} (npm package ${pkg})`);
  }
  const binary = join(dir, 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
  if (!existsSync(binary)) throw new Error(`${pkg} has no anvil binary`);
  return binary;
}

export async function startAnvil(options: AnvilOptions = {}): Promise<Anvil> {
  const args = ['--host', '127.0.0.1', '--port', String(options.port ?? 0), '--chain-id', String(options.chainId ?? 31337)];
  if (options.accounts !== undefined) args.push('--accounts', String(options.accounts));
  if (options.mnemonic !== undefined) args.push('--mnemonic', options.mnemonic);
  if (options.balanceEth !== undefined) args.push('--balance', String(options.balanceEth));
  if (options.blockTimeSeconds !== undefined) args.push('--block-time', String(options.blockTimeSeconds));
  args.push('--prune-history', String(options.keptStates ?? 256));
  args.push('--hardfork', options.hardfork ?? 'cancun');

  const child = spawn(findAnvilBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  // If this process exits without stopping anvil (a crashed test, an uncaught error), take it along.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  child.once('exit', () => process.off('exit', killOnExit));

  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await listeningPort(child, options.startTimeoutMs ?? 15_000);
  return { rpcUrl: `http://127.0.0.1:${port}`, port, pid: child.pid!, exited, stop: (graceMs) => stopChild(child, graceMs ?? 3_000) };
}

/** Resolves with the port from anvil's "Listening on 127.0.0.1:<port>" line; kills anvil on failure. */
function listeningPort(child: ChildProcess, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let output = '';
    const fail = (message: string) => {
      cleanup();
      child.kill('SIGKILL');
      reject(new Error(`anvil did not start: ${message}${output ? `\n${output.slice(-2_000)}` : ''}`));
    };
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /Listening on 127\.0\.0\.1:(\d+)/.exec(output);
      if (match) {
        cleanup();
        // Keep draining the pipes so anvil never blocks on a full buffer.
        child.stdout?.resume();
        child.stderr?.resume();
        resolve(Number(match[1]));
      }
    };
    const onExit = (code: number | null, signal: string | null) => fail(`exited (${signal ?? code})`);
    const onError = (err: Error) => fail(err.message);
    const timer = setTimeout(() => fail(`no "Listening on" line within ${timeoutMs} ms`), timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
      child.off('error', onError);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
  });
}

function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
