import { createPublicClient } from 'viem';
import { evmChain } from '../../chain/evm-chain.js';
import type { Network, PaymentPayload, PaymentRequirements } from '../../shared/payments/x402-wire.js';
import { parseExactPayment } from './exact-payment.js';
import { type SettleResult, settleFailure } from './results.js';
import { rpcTransport } from './rpc-transport.js';
import { eip3009Abi } from './transfer-authorization.js';
import { findSettledTransfer, type SettlerClients } from './transfer-sender.js';

export type ChainWitnessConfig = {
  /** A JSON-RPC endpoint of the rail's chain; read only. */
  rpcUrl: string;
  chainId: number;
  /** How far back to look for the transfer that used an authorization. Default 50,000 blocks. */
  lookbackBlocks?: bigint;
  timeoutMs?: number;
};

/**
 * The chain's word on a payment a remote facilitator cannot tell about. x402's facilitator answers
 * a second settle of a settled payment as it answers one the payer canceled ("authorization used",
 * or a revert), and one past its window as "expired" whether or not an earlier settle moved it.
 * The token can tell them apart:
 * - the authorization was used by a transfer that paid this payee this amount: settled, by that
 *   transaction (the signature binds both, so whoever submitted it paid the seller);
 * - it was used, and the chain since before it became valid holds no such transfer: the payer
 *   canceled it, and nothing ever moves;
 * - it is unused and has lapsed: nothing can move it any more.
 * Anything else (unused and still valid; a search that does not reach back far enough) is not
 * known yet.
 */
export class ChainWitness {
  /** The chain's reader, for what else hub reads on the rail (a session's channels). */
  readonly reader: SettlerClients['reader'];
  private readonly network: Network;
  private readonly closeTransport: () => Promise<void>;

  constructor(private readonly config: ChainWitnessConfig) {
    const { transport, close } = rpcTransport(config.rpcUrl, { timeoutMs: config.timeoutMs ?? 10_000 });
    this.closeTransport = close;
    this.reader = createPublicClient({ chain: evmChain(config.chainId, config.rpcUrl), transport });
    this.network = `eip155:${config.chainId}`;
  }

  /** Settled or failed as the chain shows it; undefined when it cannot tell yet. Throws when it cannot be read. */
  async outcomeOf(paymentPayload: PaymentPayload, paymentRequirements: PaymentRequirements): Promise<SettleResult | undefined> {
    const parsed = parseExactPayment(paymentPayload, paymentRequirements);
    if ('failure' in parsed) return undefined;
    const { authorization, payer } = parsed.payment;
    const token = parsed.payment.requirements.asset as `0x${string}`;
    const [used, head] = await Promise.all([
      this.reader.readContract({
        address: token,
        abi: eip3009Abi,
        functionName: 'authorizationState',
        args: [authorization.from, authorization.nonce],
      }),
      this.reader.getBlock(),
    ]);
    const network = this.network;
    if (!used) {
      if (authorization.validBefore > head.timestamp) return undefined;
      return settleFailure('authorization_expired', { network, payer, message: 'The authorization lapsed unused: nothing moved.' });
    }
    const lookback = this.config.lookbackBlocks ?? 50_000n;
    const transaction = await findSettledTransfer({ reader: this.reader }, { token, authorization }, lookback, head.number);
    if (transaction)
      return { status: 'settled', transaction, network, payer, amount: authorization.value.toString(), alreadySettled: true };
    // Not found: proof of a cancel only if the search reached back to before the authorization was valid.
    const first = head.number > lookback ? head.number - lookback : 0n;
    const searchedFrom = first === 0n ? 0n : (await this.reader.getBlock({ blockNumber: first })).timestamp;
    if (searchedFrom > authorization.validAfter) return undefined;
    return settleFailure('nonce_already_used', { network, payer, message: 'The payer canceled the authorization: nothing moved.' });
  }

  async close(): Promise<void> {
    await this.closeTransport();
  }
}
