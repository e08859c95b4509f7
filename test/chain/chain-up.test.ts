import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createPublicClient, http } from 'viem';
import { readDeploymentFile } from '../../chain/deployment.js';
import { alive, seedCompiledContracts } from '../helpers/chain.js';
import { hubBin as bin } from '../helpers/processes.js';

t.setTimeout(90_000);

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

t.test('hub chain up writes chain.json, serves the chain, and takes anvil down on SIGTERM', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'hub-chain-up-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  await seedCompiledContracts(dataDir);
  const cli = spawn(process.execPath, [bin, 'chain', 'up', '--accounts', '3'], {
    env: { ...process.env, HUB_DATA_DIR: dataDir, HUB_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  cli.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  cli.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const cliExit = new Promise<number | null>((resolve) => cli.once('exit', (code) => resolve(code)));
  t.teardown(() => void cli.kill('SIGKILL'));

  const file = join(dataDir, 'chain.json');
  await until('chain.json', () => (existsSync(file) ? true : undefined), 60_000).catch((err) => {
    throw new Error(`${(err as Error).message}\n${output}`);
  });
  const deployment = await readDeploymentFile(file);
  t.equal(deployment.accounts.length, 3);
  t.equal(deployment.token.decimals, 6);
  t.match(JSON.parse(await readFile(file, 'utf8')).note, /public knowledge/);
  const reader = createPublicClient({ transport: http(deployment.rpcUrl) });
  t.equal(await reader.getChainId(), deployment.chainId);
  t.ok((await reader.getCode({ address: deployment.token.address }))?.length, 'the token is deployed');

  const anvilPid = await until(
    'the log line',
    () => {
      const match = /"pid":(\d+)/.exec(output);
      return match ? Number(match[1]) : undefined;
    },
    5_000,
  );
  t.ok(alive(anvilPid));

  cli.kill('SIGTERM');
  t.equal(await cliExit, 0, 'exits cleanly');
  await until('anvil to exit', () => (alive(anvilPid) ? undefined : true), 10_000);
  t.notOk(existsSync(file), 'chain.json is removed with the chain');
});

t.test('hub chain refuses what it does not know', async (t) => {
  const run = (args: string[]) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [bin, 'chain', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('exit', (code) => resolve({ code, stderr }));
    });
  t.match(await run(['down']), { code: 1, stderr: /usage: hub chain up/ });
  t.match(await run(['up', '--accounts', '1']), { code: 1, stderr: /--accounts must be an integer from 2/ });
});
