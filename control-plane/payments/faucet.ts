import { createPublicClient, createWalletClient, type Hex, http, parseAbi } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { ChainDeployment } from '../../chain/deployment.js';
import { evmChain } from '../../chain/evm-chain.js';
import { microsToTokenUnits } from '../../shared/money.js';

const mintAbi = parseAbi(['function mint(address to, uint256 value)']);
/** A local chain mines at once: a receipt this late means the mint is stuck. */
const RECEIPT_TIMEOUT_MS = 15_000;

/**
 * Test tokens on a local chain, minted with the deployer's key (it holds the token's minter role).
 * Mints are sent one after another: two at once from one key would race for the same nonce.
 */
export function localFaucet(chain: Pick<ChainDeployment, 'chainId' | 'rpcUrl' | 'token' | 'deployer'>) {
  const transport = http(chain.rpcUrl);
  const viemChain = evmChain(chain.chainId, chain.rpcUrl);
  const wallet = createWalletClient({ account: privateKeyToAccount(chain.deployer.privateKey), chain: viemChain, transport });
  const reader = createPublicClient({ chain: viemChain, transport });
  let turn: Promise<unknown> = Promise.resolve();
  return (to: Hex, micros: bigint): Promise<Hex> => {
    const mint = turn.then(async () => {
      const hash = await wallet.writeContract({
        address: chain.token.address,
        abi: mintAbi,
        functionName: 'mint',
        args: [to, microsToTokenUnits(micros, chain.token.decimals)],
      });
      const receipt = await reader.waitForTransactionReceipt({ hash, timeout: RECEIPT_TIMEOUT_MS, pollingInterval: 25 });
      if (receipt.status !== 'success') throw new Error(`mint reverted (${hash})`);
      return hash;
    });
    turn = mint.catch(() => undefined);
    return mint;
  };
}
