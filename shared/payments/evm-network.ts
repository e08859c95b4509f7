/**
 * The chain id of a CAIP-2 EVM network (`eip155:8453` → 8453); undefined for any other network,
 * or a chain id that is not a safe integer. One reading for every caller: a network is compared
 * and signed for by the same number everywhere.
 */
export function chainIdOf(network: string): number | undefined {
  const digits = /^eip155:([1-9][0-9]*)$/.exec(network)?.[1];
  const chainId = digits === undefined ? Number.NaN : Number(digits);
  return Number.isSafeInteger(chainId) ? chainId : undefined;
}

/** `chainIdOf` for a network hub already took for EVM (a seller's, a rail's): anything else is a bug. */
export function evmChainIdOf(network: string): number {
  const chainId = chainIdOf(network);
  if (chainId === undefined) throw new Error(`not an EVM network: ${network}`);
  return chainId;
}
