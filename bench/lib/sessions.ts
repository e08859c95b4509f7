import { x402Client } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { type Address, createPublicClient, type Hex, http, parseAbi, parseEventLogs, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { ChainDeployment } from '../../chain/deployment.js';
import { evmChain } from '../../chain/evm-chain.js';
import { BATCH_SETTLEMENT_CONTRACT } from '../../shared/payments/batch-settlement.js';

/**
 * x402 `batch-settlement` sessions in bench:payments: the unmodified x402 fetch client with x402's
 * batch-settlement client scheme, one per concurrent client (each its own channel: the scheme
 * serializes a channel's requests), and what a paid answer and the chain say of the vouchers.
 */

/**
 * Ten unmodified x402 session clients of one payer, each with a channel of its own (its salt) that
 * it opens with one deposit of `depositUnits` (x402's client option `depositStrategy`; its default,
 * five calls' worth, would send a deposit every fifth call) and then pays with vouchers only.
 */
export function sessionClients(chain: ChainDeployment, payerKey: Hex, depositUnits: bigint): (slot: number) => typeof fetch {
  const reader = createPublicClient({ chain: evmChain(chain.chainId, chain.rpcUrl), transport: http(chain.rpcUrl) });
  const signer = toClientEvmSigner(privateKeyToAccount(payerKey), reader);
  const clients = new Map<number, typeof fetch>();
  return (slot) => {
    let pay = clients.get(slot);
    if (!pay) {
      const scheme = new BatchSettlementEvmScheme(signer, {
        salt: toHex(slot + 1, { size: 32 }),
        depositStrategy: ({ depositAmount }) => (BigInt(depositAmount) > depositUnits ? depositAmount : depositUnits),
      });
      const client = new x402Client();
      client.register(chain.network, scheme);
      client.setSpendControls({ allowedAssets: true });
      pay = wrapFetchWithPayment(fetch, client);
      clients.set(slot, pay);
    }
    return pay;
  };
}

/** What a session's paid answer says (`payment-response`): the deposit's transaction (empty for a voucher), what was charged, the channel's total. */
export type SessionCharge = { transaction: string; charged: bigint; cumulative: bigint };

export function sessionCharge(res: Response): SessionCharge | undefined {
  const header = res.headers.get('payment-response');
  if (!header) return undefined;
  const settled = JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as {
    success?: boolean;
    transaction?: string;
    extra?: { chargedAmount?: string; channelState?: { chargedCumulativeAmount?: string } };
  };
  const charged = settled.extra?.chargedAmount;
  const cumulative = settled.extra?.channelState?.chargedCumulativeAmount;
  if (!settled.success || charged === undefined || cumulative === undefined) return undefined;
  return { transaction: settled.transaction ?? '', charged: BigInt(charged), cumulative: BigInt(cumulative) };
}

const claimedEvent = parseAbi([
  'event Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimAmount, uint128 newTotalClaimed)',
]);

/** The claim transactions `sender` had mined on the batch-settlement contract between two blocks, and what they claimed in all. */
export async function claimsBy(
  chain: ChainDeployment,
  sender: Address,
  fromBlock: bigint,
  toBlock: bigint,
): Promise<{ transactions: number; channels: number; units: bigint }> {
  const reader = createPublicClient({ transport: http(chain.rpcUrl) });
  const logs = parseEventLogs({
    abi: claimedEvent,
    logs: await reader.getLogs({ address: BATCH_SETTLEMENT_CONTRACT, fromBlock, toBlock }),
  }).filter((log) => log.args.sender.toLowerCase() === sender.toLowerCase());
  return {
    transactions: new Set(logs.map((log) => log.transactionHash)).size,
    channels: logs.length,
    units: logs.reduce((sum, log) => sum + log.args.claimAmount, 0n),
  };
}
