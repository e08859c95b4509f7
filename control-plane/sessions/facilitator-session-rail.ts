import { type Address, decodeFunctionResult, encodeFunctionData, getAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { within } from '../../runtime/within.js';
import { ConfigError } from '../../shared/config.js';
import { ApiError } from '../../shared/errors.js';
import { BATCH_SETTLEMENT_CONTRACT, BATCH_SETTLEMENT_SCHEME } from '../../shared/payments/batch-settlement.js';
import { evmChainIdOf } from '../../shared/payments/evm-network.js';
import { settleResponseSchema } from '../../shared/payments/x402-wire.js';
import { shortMessage } from '../facilitator/chain-errors.js';
import type { ChainWitness } from '../facilitator/chain-witness.js';
import { signatureReadsOf } from '../facilitator/contract-signature.js';
import { FacilitatorUnavailableError } from '../facilitator/facilitator.js';
import type { HttpFacilitator } from '../facilitator/http-facilitator.js';
import type { CallOutcome } from '../facilitator/local-facilitator.js';
import { eip3009Abi } from '../facilitator/transfer-authorization.js';
import type { SettlerClients } from '../facilitator/transfer-sender.js';
import { batchSettlementDomain, type ChannelConfig, channelIdOf } from './channel-digests.js';
import {
  batchSettlementAbi,
  claimBatchTypedData,
  depositNonce,
  refundTypes,
  type SessionRail,
  type VoucherClaim,
  WITHDRAW_DELAY_SECONDS,
  withdrawalsCall,
  withdrawalsOf,
} from './session-rail.js';

export type FacilitatorSessionRailConfig = {
  /** The rail's remote facilitator, which takes x402's batch-settlement scheme on `network`. */
  facilitator: HttpFacilitator;
  /** Reads the rail's chain (its `HUB_PAYMENT_RPC_URL`): channels, receivers, refund nonces. */
  reader: SettlerClients['reader'];
  network: `eip155:${number}`;
  token: { address: Hex; name: string; version: string };
  /** hub's receiver authorizer: signs claim batches and refunds, never sends a transaction. */
  authorizerKey: Hex;
};

/**
 * Sessions on a rail whose facilitator is remote (docs/decisions.md#D-340): x402's batch-settlement
 * contract at the scheme's address, written to only through the facilitator's `POST /settle` with
 * the scheme's payloads (`deposit`, `claim`, `settle`, `refund`; the facilitator's key sends them
 * and pays their gas), and read through the rail's RPC. hub's own key is the channels' receiver
 * authorizer: it signs every claim batch and refund and hands the facilitator the signatures, so
 * the facilitator never authorizes a claim or refund of hub's channels itself. Vouchers are checked
 * in hub, as on the local rail (claim-session.ts).
 */
export function facilitatorSessionRail(config: FacilitatorSessionRailConfig): SessionRail {
  const { facilitator, reader, network, token } = config;
  const authorizer = privateKeyToAccount(config.authorizerKey);
  const chainId = evmChainIdOf(network);

  /** A read of the chain; a chain that does not answer is `FacilitatorUnavailableError`. */
  const fromChain = async <T>(reading: () => Promise<T>): Promise<T> => {
    try {
      return await reading();
    } catch (err) {
      throw new FacilitatorUnavailableError('network', `chain RPC: ${shortMessage(err)}`, undefined, { cause: err });
    }
  };
  /** eth_call of `to`, the channel contract unless said. */
  const read = (data: Hex, to: Address = BATCH_SETTLEMENT_CONTRACT): Promise<Hex> =>
    fromChain(async () => (await reader.call({ to, data })).data ?? '0x');

  /** The requirements a facilitator checks a channel's payload against: hub's terms for the channel's receiver. */
  const requirements = (receiver: Address, amount = '0') => ({
    scheme: BATCH_SETTLEMENT_SCHEME,
    network,
    asset: getAddress(token.address),
    amount,
    payTo: getAddress(receiver),
    maxTimeoutSeconds: 0,
    extra: { name: token.name, version: token.version, receiverAuthorizer: authorizer.address, withdrawDelay: WITHDRAW_DELAY_SECONDS },
  });

  /**
   * One `POST /settle` of a scheme payload, and how it ended. Nothing sent (the connection never
   * opened) is `FacilitatorUnavailableError`; a request the facilitator may have acted on with no
   * answer to tell (a timeout, a 5xx, an answer that is not a settle response) throws
   * `SessionSendUnknownError`, since no transaction hash came with it: a recorded claim, settle or
   * refund is then followed from the chain (follow-transactions.ts), never sent again. A successful
   * transaction is `mined` only once `landed` reads its effect on chain (docs/decisions.md#D-355):
   * any successful hash is not proof that it did what was asked.
   */
  const send = async (
    payload: Record<string, unknown>,
    receiver: Address,
    landed: () => Promise<boolean>,
    amount?: string,
  ): Promise<CallOutcome> => {
    const paymentRequirements = requirements(receiver, amount);
    const reply = await facilitator.settleReply({
      x402Version: 2,
      paymentPayload: { x402Version: 2, accepted: paymentRequirements, payload },
      paymentRequirements,
    });
    if ('failure' in reply) {
      if (!reply.sent) throw new FacilitatorUnavailableError('network', `facilitator: ${reply.failure}`);
      throw new SessionSendUnknownError(`facilitator: ${reply.failure}`);
    }
    const parsed = settleResponseSchema.safeParse(reply.json);
    if (!parsed.success || (reply.status !== 200 && reply.status !== 400)) {
      const excerpt = (typeof reply.json === 'string' ? reply.json : JSON.stringify(reply.json)).slice(0, 200);
      const message = `facilitator: settle answered ${reply.status}: ${excerpt}`;
      // A refusal the facilitator gave before doing anything (a 4xx that is not a settle answer) sent nothing.
      if (reply.status >= 400 && reply.status < 500) return { status: 'refused', message };
      throw new SessionSendUnknownError(message);
    }
    const answer = parsed.data;
    const transaction = /^0x[0-9a-fA-F]{64}$/.test(answer.transaction) ? (answer.transaction as Hex) : undefined;
    const why = [answer.errorReason, answer.errorMessage].filter(Boolean).join(': ') || 'refused';
    if (!answer.success) {
      if (!transaction) return { status: 'refused', message: why };
      // x402's facilitator sent it and could not get its receipt: not known yet.
      if (answer.errorReason === 'settlement_pending') return { status: 'unknown', transaction, message: why };
      return { status: 'reverted', transaction };
    }
    if (!transaction) throw new SessionSendUnknownError(`facilitator: settled without a transaction hash (${JSON.stringify(answer)})`);
    // The facilitator waited for the receipt before it answered; the chain's copy is hub's proof.
    const receipt = await reader.getTransactionReceipt({ hash: transaction }).catch(() => undefined);
    if (!receipt) return { status: 'unknown', transaction, message: 'the facilitator settled it; its receipt could not be read yet' };
    if (receipt.status !== 'success') return { status: 'reverted', transaction };
    // Not confirmed (or not readable): followed from the chain by its record, never sent again.
    const confirmed = await landed().catch(() => false);
    if (!confirmed)
      return { status: 'unknown', transaction, message: 'the facilitator’s transaction is not seen to have done what was asked' };
    return { status: 'mined', transaction, receipt };
  };

  const signClaims = (claims: VoucherClaim[]) => authorizer.signTypedData(claimBatchTypedData(claims, chainId));
  /** True when every claim's channel is claimed on chain up to the claim's total. */
  const claimsLanded = async (claims: VoucherClaim[]) => {
    const onChain = await Promise.all(claims.map((c) => rail.channel(channelIdOf(c.config, chainId))));
    return claims.every((c, i) => onChain[i]!.totalClaimed >= c.totalClaimed);
  };

  const rail: SessionRail = {
    receiverAuthorizer: authorizer.address,
    withdrawDelay: WITHDRAW_DELAY_SECONDS,
    async channel(channelId) {
      const data = await read(encodeFunctionData({ abi: batchSettlementAbi, functionName: 'channels', args: [channelId] }));
      const [balance, totalClaimed] = decodeFunctionResult({ abi: batchSettlementAbi, functionName: 'channels', data });
      return { balance, totalClaimed };
    },
    async deposit(channel, amount, authorization, voucher) {
      const payload = {
        type: 'deposit',
        channelConfig: wireConfig(channel),
        voucher: {
          channelId: channelIdOf(channel, chainId),
          maxClaimableAmount: voucher.maxClaimableAmount.toString(),
          signature: voucher.signature,
        },
        deposit: { amount: amount.toString(), authorization: { erc3009Authorization: authorization } },
      };
      try {
        return await send(payload, channel.receiver, () => rail.depositLanded(channel, authorization.salt), amount.toString());
      } catch (err) {
        // The payer's retry meets this: the call was not forwarded and nothing was charged.
        if (err instanceof FacilitatorUnavailableError || err instanceof SessionSendUnknownError) {
          throw new ApiError(
            'service_unavailable',
            `The facilitator did not take the deposit (${err.message}). Nothing was charged; send the same payment again shortly.`,
          );
        }
        throw err;
      }
    },
    async claim(claims) {
      const payload = { type: 'claim', claims: claims.map(wireClaim), claimAuthorizerSignature: await signClaims(claims) };
      return send(payload, claims[0]!.config.receiver, () => claimsLanded(claims));
    },
    async receiverTotals(receiver, asset) {
      const data = await read(encodeFunctionData({ abi: batchSettlementAbi, functionName: 'receivers', args: [receiver, asset] }));
      const [totalClaimed, totalSettled] = decodeFunctionResult({ abi: batchSettlementAbi, functionName: 'receivers', data });
      return { totalClaimed, totalSettled };
    },
    async settle(receiver, asset) {
      // What the settle is asked to reach: all the receiver has claimed in the token before it is sent.
      const { totalClaimed } = await rail.receiverTotals(receiver, asset);
      const settled = async () => (await rail.receiverTotals(receiver, asset)).totalSettled >= totalClaimed;
      return send({ type: 'settle', receiver: getAddress(receiver), token: getAddress(asset) }, receiver, settled);
    },
    async refundNonce(channelId) {
      const data = await read(encodeFunctionData({ abi: batchSettlementAbi, functionName: 'refundNonce', args: [channelId] }));
      return decodeFunctionResult({ abi: batchSettlementAbi, functionName: 'refundNonce', data });
    },
    async refund({ config: channel, amount, nonce, claim }) {
      const channelId = channelIdOf(channel, chainId);
      const refundAuthorizerSignature = await authorizer.signTypedData({
        domain: batchSettlementDomain(chainId),
        types: refundTypes,
        primaryType: 'Refund',
        message: { channelId, nonce, amount },
      });
      const payload = {
        type: 'refund',
        channelConfig: wireConfig(channel),
        // x402's facilitator reads the voucher only as the claim's; without a claim it names the channel alone.
        voucher: claim
          ? { channelId, maxClaimableAmount: claim.maxClaimableAmount.toString(), signature: claim.signature }
          : { channelId, maxClaimableAmount: '0', signature: '0x' },
        amount: amount.toString(),
        refundNonce: nonce.toString(),
        claims: claim ? [wireClaim(claim)] : [],
        refundAuthorizerSignature,
        ...(claim ? { claimAuthorizerSignature: await signClaims([claim]) } : {}),
      };
      // Landed: the channel's refund nonce moved past the one signed, and its claim, if any, is on chain.
      const landed = async () => (await rail.refundNonce(channelId)) > nonce && (!claim || (await claimsLanded([claim])));
      return send(payload, channel.receiver, landed);
    },
    chainTime() {
      return fromChain(async () => Number((await reader.getBlock({ blockTag: 'latest' })).timestamp));
    },
    async depositLanded(channel, salt) {
      const nonce = depositNonce(channelIdOf(channel, chainId), salt);
      const data = await read(
        encodeFunctionData({ abi: eip3009Abi, functionName: 'authorizationState', args: [channel.payer, nonce] }),
        channel.token,
      );
      return decodeFunctionResult({ abi: eip3009Abi, functionName: 'authorizationState', data });
    },
    async withdrawals(channelIds) {
      if (channelIds.length === 0) return [];
      return withdrawalsOf(channelIds, await read(withdrawalsCall(channelIds)));
    },
    signatureReads: signatureReadsOf(reader, fromChain),
    offered: schemeListed(facilitator, network),
  };
  return rail;
}

/** How long a facilitator's `/supported` answer stands for the 402's offer of sessions. */
const SUPPORTED_FRESH_MS = 60_000;
/** How long a 402 waits for the first answer (until it comes, sessions are not offered). */
const FIRST_ANSWER_WAIT_MS = 2_000;

/**
 * Whether the facilitator's `/supported` lists batch-settlement on `network` (docs/decisions.md#D-361),
 * asked at most once every `freshMs`: the first answer is waited for (2 s at most), later ones are
 * the last answer while a fresh one is asked. A facilitator that does not answer keeps its last answer (with
 * none yet: not listed).
 */
export function schemeListed(
  facilitator: Pick<HttpFacilitator, 'supported'>,
  network: string,
  freshMs = SUPPORTED_FRESH_MS,
): () => Promise<boolean> {
  let listed: boolean | undefined;
  let askedAt = Number.NEGATIVE_INFINITY;
  let asking: Promise<boolean> | undefined;
  const ask = () => {
    askedAt = Date.now();
    if (asking) return;
    asking = facilitator.supported().then(
      ({ kinds }) => {
        asking = undefined;
        listed = kinds.some((kind) => kind.scheme === BATCH_SETTLEMENT_SCHEME && kind.network === network);
        return listed;
      },
      () => {
        asking = undefined;
        return listed ?? false;
      },
    );
  };
  return async () => {
    if (Date.now() - askedAt >= freshMs) ask();
    // The first answer is waited for a short while only: a facilitator that hangs must not hold up the 402.
    return listed ?? (asking && (await within(asking, FIRST_ANSWER_WAIT_MS))) ?? false;
  };
}

/**
 * A request the facilitator may have acted on, with no answer that says how it ended and no
 * transaction hash to follow: neither failed (something may be on chain) nor known.
 */
export class SessionSendUnknownError extends Error {
  override name = 'SessionSendUnknownError';
}

/** A channel's config as the scheme's JSON payloads carry it. */
function wireConfig(config: ChannelConfig) {
  return {
    payer: getAddress(config.payer),
    payerAuthorizer: getAddress(config.payerAuthorizer),
    receiver: getAddress(config.receiver),
    receiverAuthorizer: getAddress(config.receiverAuthorizer),
    token: getAddress(config.token),
    withdrawDelay: Number(config.withdrawDelay),
    salt: config.salt,
  };
}

/** One row of a claim payload: the channel's voucher and the total to raise its claimed amount to. */
function wireClaim(claim: VoucherClaim) {
  return {
    voucher: { channel: wireConfig(claim.config), maxClaimableAmount: claim.maxClaimableAmount.toString() },
    signature: claim.signature,
    totalClaimed: claim.totalClaimed.toString(),
  };
}

/**
 * A remote rail's sessions, when its settings ask for them: `<prefix>_RECEIVER_AUTHORIZER_KEY` set
 * (hub's receiver authorizer), which needs the rail's `<prefix>_RPC_URL` (hub reads the channels
 * it takes vouchers on). Unset: the rail offers `exact` only.
 */
export function remoteSessions(
  prefix: string,
  authorizerKey: string | undefined,
  rail: {
    facilitator: HttpFacilitator;
    witness: ChainWitness | undefined;
    network: string;
    token: { address: Hex; name: string; version: string };
  },
): SessionRail | undefined {
  if (!authorizerKey) return undefined;
  if (!/^0x[0-9a-fA-F]{64}$/.test(authorizerKey))
    throw new ConfigError(`${prefix}_RECEIVER_AUTHORIZER_KEY must be a private key (0x and 64 hex digits)`);
  if (!rail.witness) {
    throw new ConfigError(
      `${prefix}_RECEIVER_AUTHORIZER_KEY needs ${prefix}_RPC_URL: hub reads the batch-settlement channels it takes vouchers on`,
    );
  }
  return facilitatorSessionRail({
    facilitator: rail.facilitator,
    reader: rail.witness.reader,
    network: rail.network as `eip155:${number}`,
    token: rail.token,
    authorizerKey: authorizerKey as Hex,
  });
}
