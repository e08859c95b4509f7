import { createPublicClient, http } from 'viem';
import { oneLine } from '../runtime/process.js';
import type { ChainDeployment } from './deployment.js';

/**
 * Whether the chain a description names is the one it describes: its RPC answers, as the same
 * chain id, with the token deployed at the address. A description outlives its chain when hub
 * is killed or the machine restarts (anvil keeps nothing), and payments on it could only fail.
 * Resolves with why not, or undefined when it answers.
 */
export async function whyChainDoesNotAnswer(
  chain: Pick<ChainDeployment, 'chainId' | 'rpcUrl' | 'token'>,
  timeoutMs = 2_000,
): Promise<string | undefined> {
  const reader = createPublicClient({ transport: http(chain.rpcUrl, { timeout: timeoutMs, retryCount: 0 }) });
  try {
    const chainId = await reader.getChainId();
    if (chainId !== chain.chainId) return `${chain.rpcUrl} is chain ${chainId}, not ${chain.chainId}`;
    const code = await reader.getCode({ address: chain.token.address });
    if (!code || code === '0x') return `no token contract at ${chain.token.address} on ${chain.rpcUrl}`;
    return undefined;
  } catch (err) {
    return `${chain.rpcUrl} does not answer (${oneLine(err)})`;
  }
}
