import { type Chain, defineChain } from 'viem';

/** viem's description of the EVM chain `chainId`, reached at `rpcUrl`; its gas is paid in ether. */
export function evmChain(chainId: number, rpcUrl: string): Chain {
  return defineChain({
    id: chainId,
    name: `eip155:${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}
