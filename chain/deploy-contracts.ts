import { type Address, type Chain, createPublicClient, createWalletClient, getAddress, type Hex, http, parseAbi } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { ContractArtifact } from './compile.js';

/**
 * Deploys hub's development contracts from one deployer key: the HubUSD token (the deployer
 * becomes admin and minter, and mints the starting balances) and the HubEscrow that ceiling-priced
 * calls pay into (operated by the settler).
 */

export type TokenDomain = { name: string; symbol: string; version: string };

const mintAbi = parseAbi(['function mint(address to, uint256 value)']);
/** A development chain mines at once; a receipt this late means the transaction is stuck. */
const RECEIPT_TIMEOUT_MS = 30_000;

export async function deployContracts(input: {
  rpcUrl: string;
  chain: Chain;
  artifacts: { token: ContractArtifact; escrow: ContractArtifact };
  deployerKey: Hex;
  domain: TokenDomain;
  /** Atomic token units to mint to each address. */
  mints: { to: Address; units: bigint }[];
  /** The only account that may settle through the escrow. */
  escrowOperator: Address;
}): Promise<{ token: Address; escrow: Address }> {
  // Explicit nonces, counted from the chain once: no nonce manager to remember numbers across
  // chains or skip one (a gap would leave a mint unmined and its wait hanging).
  const account = privateKeyToAccount(input.deployerKey);
  const transport = http(input.rpcUrl);
  const wallet = createWalletClient({ account, chain: input.chain, transport });
  const reader = createPublicClient({ chain: input.chain, transport });
  const mined = (hash: Hex) => reader.waitForTransactionReceipt({ hash, timeout: RECEIPT_TIMEOUT_MS });
  const first = await reader.getTransactionCount({ address: account.address, blockTag: 'pending' });
  const deployed = async (hash: Hex, what: string) => {
    const receipt = await mined(hash);
    if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error(`${what} deployment reverted (${hash})`);
    return getAddress(receipt.contractAddress);
  };

  // Sent one after another (each send returns once the node holds it), never at once: a
  // transaction that reaches anvil before the one with the nonce below it waits in its queue, and
  // automine does not always mine it when the gap fills, leaving its wait to time out.
  const tokenHash = await wallet.deployContract({
    abi: input.artifacts.token.abi,
    bytecode: input.artifacts.token.bytecode,
    args: [input.domain.name, input.domain.symbol, input.domain.version, account.address],
    nonce: first,
  });
  const escrowHash = await wallet.deployContract({
    abi: input.artifacts.escrow.abi,
    bytecode: input.artifacts.escrow.bytecode,
    args: [input.escrowOperator],
    nonce: first + 1,
  });
  const [token, escrow] = await Promise.all([deployed(tokenHash, 'token'), deployed(escrowHash, 'escrow')]);

  const hashes: Hex[] = [];
  for (const [i, { to, units }] of input.mints.entries()) {
    hashes.push(
      await wallet.writeContract({ address: token, abi: mintAbi, functionName: 'mint', args: [to, units], nonce: first + 2 + i }),
    );
  }
  const receipts = await Promise.all(hashes.map(mined));
  const failed = receipts.find((r) => r.status !== 'success');
  if (failed) throw new Error(`mint reverted (${failed.transactionHash})`);
  return { token, escrow };
}
