import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { microsToTokenUnits } from '../shared/money.js';
import { startAnvil } from './anvil.js';
import { compileContracts } from './compile.js';
import { deployContracts, type TokenDomain } from './deploy-contracts.js';
import type { ChainDeployment } from './deployment.js';
import { DEV_MNEMONIC, devAccounts } from './dev-accounts.js';
import { evmChain } from './evm-chain.js';
import { placeBatchSettlement } from './place-batch-settlement.js';

/**
 * A real local chain for development, the demo and tests: anvil on loopback with automine, the
 * HubUSD token and the HubEscrow deployed, hub's batch-settlement contracts at x402's addresses
 * (place-batch-settlement.ts), and every dev account holding tokens.
 */

export type LocalChainOptions = {
  /** 0 (the default) picks a free port. */
  port?: number;
  chainId?: number;
  /** Dev accounts to create and fund; at least 2 (deployer and settler). Default 10. */
  accounts?: number;
  /** micro-USD of tokens minted to every account. Default $1,000. */
  fundMicros?: bigint;
  token?: Partial<TokenDomain>;
  /** Where compiled contracts are cached. Default: a folder under the OS temp dir. */
  cacheDir?: string;
};

export type LocalChain = ChainDeployment & {
  /** anvil's process id. */
  pid: number;
  /** Settles when anvil exits, whether stopped or not. */
  exited: Promise<void>;
  stop(): Promise<void>;
};

/** The contracts a dev chain runs, compiled together. */
export const DEV_CONTRACTS = ['HubUSD', 'HubEscrow', 'HubBatchSettlement', 'HubErc3009Collector'];

const DEFAULT_TOKEN: TokenDomain = { name: 'Hub USD', symbol: 'HUSD', version: '1' };
const DECIMALS = 6;

export async function startLocalChain(options: LocalChainOptions = {}): Promise<LocalChain> {
  const chainId = options.chainId ?? 31337;
  const count = options.accounts ?? 10;
  if (count < 2) throw new RangeError('a local chain needs at least 2 accounts (deployer and settler)');
  const domain: TokenDomain = { ...DEFAULT_TOKEN, ...options.token };
  const units = microsToTokenUnits(options.fundMicros ?? 1_000_000_000n, DECIMALS);

  // Compiling (seconds on a cache miss) and starting anvil do not depend on each other.
  const [[token, escrow, settlement, collector], anvil] = await Promise.all([
    compileContracts(DEV_CONTRACTS, { cacheDir: options.cacheDir ?? join(tmpdir(), 'hub-contracts') }),
    startAnvil({ port: options.port ?? 0, chainId, accounts: count, mnemonic: DEV_MNEMONIC }),
  ]);
  try {
    const accounts = devAccounts(count);
    const chain = evmChain(chainId, anvil.rpcUrl);
    const deployed = await deployContracts({
      rpcUrl: anvil.rpcUrl,
      chain,
      artifacts: { token: token!, escrow: escrow! },
      deployerKey: accounts[0]!.privateKey,
      domain,
      mints: accounts.map((a) => ({ to: a.address, units })),
      escrowOperator: accounts[1]!.address,
    });
    const batchSettlement = await placeBatchSettlement({
      rpcUrl: anvil.rpcUrl,
      chain,
      artifacts: { settlement: settlement!, collector: collector! },
      deployerKey: accounts[0]!.privateKey,
    });
    return {
      chainId,
      network: `eip155:${chainId}`,
      rpcUrl: anvil.rpcUrl,
      token: { address: deployed.token, ...domain, decimals: DECIMALS },
      escrow: deployed.escrow,
      batchSettlement,
      deployer: accounts[0]!,
      settler: accounts[1]!,
      accounts: accounts.map((a) => ({ ...a, tokenUnits: units })),
      pid: anvil.pid,
      exited: anvil.exited,
      stop: () => anvil.stop(),
    };
  } catch (err) {
    await anvil.stop();
    throw err;
  }
}
