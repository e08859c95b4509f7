import { cp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Address, createPublicClient, createWalletClient, type Hex, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { compileContracts } from '../../chain/compile.js';
import { evmChain } from '../../chain/evm-chain.js';
import { DEV_CONTRACTS, type LocalChain, type LocalChainOptions, startLocalChain } from '../../chain/local-chain.js';
import { eip3009Abi } from '../../control-plane/facilitator/transfer-authorization.js';

type Tap = { teardown: (fn: () => unknown) => void };

/** A fresh anvil with HubUSD for one test file, stopped (by its handle) when the test ends. */
export async function startTestChain(t: Tap, options: LocalChainOptions = {}): Promise<LocalChain> {
  const chain = await startLocalChain({ accounts: 6, ...options });
  t.teardown(() => chain.stop());
  return chain;
}

/**
 * Puts into `dataDir` the compiled contracts `hub chain up` and `hub start` look for there, from
 * the cache the test chains share: compiling them is seconds of CPU for every fresh data
 * directory. test/docs/readme.test.ts still compiles them from nothing, as a new checkout does.
 */
export async function seedCompiledContracts(dataDir: string): Promise<void> {
  const shared = join(tmpdir(), 'hub-contracts');
  await compileContracts(DEV_CONTRACTS, { cacheDir: shared });
  // Only finished artifacts: another test may be writing one there (it renames it when done).
  await cp(shared, join(dataDir, 'contracts'), { recursive: true, filter: (src) => src === shared || src.endsWith('.json') });
}

export function chainReader(chain: LocalChain) {
  return createPublicClient({ transport: http(chain.rpcUrl) });
}

/** A wallet on the chain that sends as `privateKey`, for a test acting as someone else (a front-runner). */
export function chainWallet(chain: LocalChain, privateKey: Hex) {
  const viemChain = evmChain(chain.chainId, chain.rpcUrl);
  return createWalletClient({ account: privateKeyToAccount(privateKey), chain: viemChain, transport: http(chain.rpcUrl) });
}

export function tokenBalance(chain: LocalChain, owner: Address): Promise<bigint> {
  return chainReader(chain).readContract({ address: chain.token.address, abi: eip3009Abi, functionName: 'balanceOf', args: [owner] });
}

/**
 * The chain's own controls, for a test that needs a settlement to wait: automine off keeps each
 * transaction in the pool (`pending` counts them) until `mine`; `automine` switched back on at the
 * test's end whatever happened.
 */
export function chainControls(t: Tap, chain: LocalChain) {
  const rpc = async (method: string, params: unknown[] = []) => {
    const res = await fetch(chain.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return ((await res.json()) as { result: unknown }).result;
  };
  return {
    automine: async (on: boolean) => {
      await rpc('evm_setAutomine', [on]);
      if (!on) t.teardown(() => rpc('evm_setAutomine', [true]));
    },
    pending: async () => Number(((await rpc('txpool_status')) as { pending?: string } | null)?.pending ?? 0),
    mine: () => rpc('evm_mine'),
  };
}

/** True while a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
