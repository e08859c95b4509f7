import { createNonceManager, createPublicClient, createWalletClient, getAddress, http, parseAbi, type Address, type Chain, type Hex } from 'viem';
import { jsonRpc } from 'viem/nonce';
import { privateKeyToAccount } from 'viem/accounts';
import type { ContractArtifact } from './compile.js';

/** Deploys the HubUSD token and mints its starting balances; the deployer becomes admin and minter. */

export type TokenDomain = { name: string; symbol: string; version: string };

const mintAbi = parseAbi(['function mint(address to, uint256 value)']);

export async function deployToken(input: {
  rpcUrl: string;
  chain: Chain;
  artifact: ContractArtifact;
  deployerKey: Hex;
  domain: TokenDomain;
  /** Atomic token units to mint to each address. */
  mints: { to: Address; units: bigint }[];
}): Promise<Address> {
  // A nonce manager of its own: viem's shared one remembers nonces per address and chain id, and
  // every fresh dev chain reuses both, so a second deployment in one process would skip nonces.
  const account = privateKeyToAccount(input.deployerKey, { nonceManager: createNonceManager({ source: jsonRpc() }) });
  const transport = http(input.rpcUrl);
  const wallet = createWalletClient({ account, chain: input.chain, transport });
  const reader = createPublicClient({ chain: input.chain, transport });

  const deployHash = await wallet.deployContract({
    abi: input.artifact.abi,
    bytecode: input.artifact.bytecode,
    args: [input.domain.name, input.domain.symbol, input.domain.version, account.address],
  });
  const deployed = await reader.waitForTransactionReceipt({ hash: deployHash });
  if (deployed.status !== 'success' || !deployed.contractAddress) throw new Error(`token deployment reverted (${deployHash})`);
  const token = getAddress(deployed.contractAddress);

  // The nonce manager numbers the mints locally, so they can all be in flight at once.
  const hashes = await Promise.all(
    input.mints.map(({ to, units }) => wallet.writeContract({ address: token, abi: mintAbi, functionName: 'mint', args: [to, units] })),
  );
  const receipts = await Promise.all(hashes.map((hash) => reader.waitForTransactionReceipt({ hash })));
  const failed = receipts.find((r) => r.status !== 'success');
  if (failed) throw new Error(`mint reverted (${failed.transactionHash})`);
  return token;
}
