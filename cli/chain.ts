import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { whyChainDoesNotAnswer } from '../chain/answers.js';
import { type ChainDeployment, readDeploymentFile, writeDeploymentFile } from '../chain/deployment.js';
import { startLocalChain } from '../chain/local-chain.js';
import { createLogger, type Logger } from '../runtime/logger.js';
import { oneLine, onShutdownSignal } from '../runtime/process.js';
import { loadConfig } from '../shared/config.js';
import { DEV_CHAIN_OF_START, supervised } from './supervision.js';

export const CHAIN_USAGE = 'usage: hub chain up [--port <n>] [--chain-id <n>] [--accounts <n>]';

/**
 * `hub chain up`: a local anvil with the HubUSD token deployed and the dev accounts funded,
 * described in `<data dir>/chain.json` for the proxy and the demo, until SIGTERM or SIGINT.
 */
export async function chainCommand(args: string[]): Promise<void> {
  const [subcommand, ...rest] = args;
  if (subcommand !== 'up') throw new Error(CHAIN_USAGE);
  const { values } = parseArgs({
    args: rest,
    options: {
      port: { type: 'string', default: '0' },
      'chain-id': { type: 'string', default: '31337' },
      accounts: { type: 'string', default: '10' },
    },
    strict: true,
  });
  const port = integer(values.port, 'port', 0, 65_535);
  const chainId = integer(values['chain-id'], 'chain-id', 1, 2 ** 53 - 1);
  const accounts = integer(values.accounts, 'accounts', 2, 1_000);

  const config = loadConfig();
  const logger = createLogger('chain', config.logLevel);
  const chain = await startLocalChain({ port, chainId, accounts, cacheDir: join(config.dataDir, 'contracts') });
  const file = config.chainFile;
  const { pid: _pid, exited: _exited, stop: _stop, ...deployment } = chain;
  await writeDeploymentFile(file, deployment satisfies ChainDeployment);
  logger.info(
    { rpcUrl: chain.rpcUrl, network: chain.network, token: chain.token.address, pid: chain.pid, file },
    process.env[DEV_CHAIN_OF_START]
      ? 'no payment rail configured: took payments on a local development chain (HUB_DEV_CHAIN=off to not)'
      : 'local chain up',
  );

  // chain.json describes a running chain; once anvil is gone it would point at nothing.
  let stopping = false;
  onShutdownSignal(
    logger,
    async () => {
      stopping = true;
      await chain.stop();
      await rm(file, { force: true });
    },
    { whenOrphaned: supervised() },
  );
  void chain.exited.then(async () => {
    if (stopping) return;
    logger.error('anvil exited unexpectedly');
    await rm(file, { force: true });
    process.exit(1);
  });
}

/**
 * Whether `file` describes a chain that answers. One that does not is stale (hub was killed, or
 * anvil with it, before it could remove the file): the file is removed, and one line says a fresh
 * chain starts in its place.
 */
export async function describedChainAnswers(file: string, logger: Logger): Promise<boolean> {
  if (!existsSync(file)) return false;
  const why = await readDeploymentFile(file).then(
    (chain) => whyChainDoesNotAnswer(chain),
    (err: unknown) => `the file cannot be read (${oneLine(err)})`,
  );
  if (why === undefined) return true;
  await rm(file, { force: true });
  logger.warn({ file, why }, `the local chain in ${file} is stale: ${why}; starting a fresh one`);
  return false;
}

function integer(value: string, name: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer from ${min} to ${max}`);
  return n;
}
