import { type Address, type Chain, createPublicClient, createWalletClient, getAddress, type Hex, http, parseAbi } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { ContractArtifact } from './compile.js';

/** Deploys the HubUSD token and mints its starting balances; the deployer becomes admin and minter. */

export type TokenDomain = { name: string; symbol: string; version: string };

const mintAbi = parseAbi(['function mint(address to, uint256 value)']);
/** A development chain mines at once; a receipt this late means the transaction is stuck. */
const RECEIPT_TIMEOUT_MS = 30_000;

export async function deployToken(input: {
  rpcUrl: string;
  chain: Chain;
  artifact: ContractArtifact;
  deployerKey: Hex;
  domain: TokenDomain;
  /** Atomic token units to mint to each address. */
  mints: { to: Address; units: bigint }[];
}): Promise<Address> {
  // Explicit nonces, counted from the chain once: no nonce manager to remember numbers across
  // chains or skip one under concurrency (a gap would leave a mint unmined and its wait hanging).
  const account = privateKeyToAccount(input.deployerKey);
  const transport = http(input.rpcUrl);
  const wallet = createWalletClient({ account, chain: input.chain, transport });
  const reader = createPublicClient({ chain: input.chain, transport });
  const mined = (hash: Hex) => reader.waitForTransactionReceipt({ hash, timeout: RECEIPT_TIMEOUT_MS });
  const first = await reader.getTransactionCount({ address: account.address, blockTag: 'pending' });

  const deployHash = await wallet.deployContract({
    abi: input.artifact.abi,
    bytecode: input.artifact.bytecode,
    args: [input.domain.name, input.domain.symbol, input.domain.version, account.address],
    nonce: first,
  });
  const deployed = await mined(deployHash);
  if (deployed.status !== 'success' || !deployed.contractAddress) throw new Error(`token deployment reverted (${deployHash})`);
  const token = getAddress(deployed.contractAddress);

  // Numbered up front, so the mints can all be in flight at once.
  const hashes = await Promise.all(
    input.mints.map(({ to, units }, i) =>
      wallet.writeContract({ address: token, abi: mintAbi, functionName: 'mint', args: [to, units], nonce: first + 1 + i }),
    ),
  );
  const receipts = await Promise.all(hashes.map(mined));
  const failed = receipts.find((r) => r.status !== 'success');
  if (failed) throw new Error(`mint reverted (${failed.transactionHash})`);
  return token;
}
