import { type Address, type Chain, createPublicClient, createTestClient, createWalletClient, getAddress, type Hex, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { BATCH_SETTLEMENT_CONTRACT, ERC3009_DEPOSIT_COLLECTOR } from '../shared/payments/batch-settlement.js';
import type { ContractArtifact } from './compile.js';

/**
 * Puts hub's batch-settlement contracts (contracts/HubBatchSettlement.sol and its ERC-3009 deposit
 * collector) at the addresses x402's batch-settlement client signs for, on a development chain:
 * each is deployed as usual, and its runtime code copied to its canonical address with anvil's
 * `anvil_setCode`. Their constructors only set immutables (each other's canonical address), which
 * live in the runtime code, and the channel contract's EIP-712 domain is worked out from the
 * address it runs at, so the copies behave as if deployed there.
 */
export async function placeBatchSettlement(input: {
  rpcUrl: string;
  chain: Chain;
  artifacts: { settlement: ContractArtifact; collector: ContractArtifact };
  deployerKey: Hex;
}): Promise<{ contract: Address; collector: Address }> {
  const account = privateKeyToAccount(input.deployerKey);
  const transport = http(input.rpcUrl);
  const wallet = createWalletClient({ account, chain: input.chain, transport });
  const reader = createPublicClient({ chain: input.chain, transport });
  const anvil = createTestClient({ mode: 'anvil', chain: input.chain, transport });
  const place = async (artifact: ContractArtifact, args: readonly unknown[], at: Address) => {
    const hash = await wallet.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode, args });
    const receipt = await reader.waitForTransactionReceipt({ hash, timeout: 30_000 });
    if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error(`${artifact.contractName} deployment reverted (${hash})`);
    const code = await reader.getCode({ address: receipt.contractAddress });
    if (!code) throw new Error(`${artifact.contractName} has no code after deployment`);
    await anvil.setCode({ address: at, bytecode: code });
    return getAddress(at);
  };
  // One after another: both come from the deployer's key, and anvil mines each on arrival.
  const collector = await place(input.artifacts.collector, [BATCH_SETTLEMENT_CONTRACT], ERC3009_DEPOSIT_COLLECTOR);
  const contract = await place(input.artifacts.settlement, [ERC3009_DEPOSIT_COLLECTOR], BATCH_SETTLEMENT_CONTRACT);
  return { contract, collector };
}
