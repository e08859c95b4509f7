import {
  type Address,
  bytesToHex,
  createPublicClient,
  createWalletClient,
  type Hex,
  type LocalAccount,
  type TransactionReceipt,
} from 'viem';
import { evmChain } from '../../chain/evm-chain.js';
import { ExpiringCache } from '../../shared/expiring-cache.js';
import type { SupportedResponse } from '../../shared/payments/x402-wire.js';
import { contractAnsweredWithout, nodeAnswered, shortMessage } from './chain-errors.js';
import { CONTRACT_WALLET_TRANSFER_GAS, contractSigned, type SignatureReads, signatureReadsOf } from './contract-signature.js';
import type { EscrowPayout, EscrowSplit } from './escrow.js';
import { checkTerms, type ExactPayment, parseExactPayment, type SettlementToken, tokenDomain, windowFailure } from './exact-payment.js';
import type { Facilitator } from './facilitator.js';
import { FacilitatorUnavailableError } from './facilitator.js';
import type { SettleFailureReason } from './results.js';
import { type SettleResult, settleFailure, type VerifyResult, verifyFailure } from './results.js';
import { rpcTransport } from './rpc-transport.js';
import { settlerAccount } from './settler-account.js';
import { SettlerState } from './settler-state.js';
import type { SignerRecovery } from './signer-recovery.js';
import { defaultSignerRecovery } from './signer-recovery.js';
import type { TransferAuthorization } from './transfer-authorization.js';
import { eip3009Abi, parseRecoverableSignature, type SettlementSignature, transferAuthorizationDigest } from './transfer-authorization.js';
import {
  authorizationUsedOnChain,
  broadcastCall,
  broadcastTransfer,
  type Confirmation,
  type ContractCall,
  confirmTransfer,
  findSettledTransfer,
  gasKind,
  nonceTakenByAnother,
  rebroadcastTransfer,
  receiptMovedFunds,
  type SettlerClients,
  type SignedTransfer,
  simulateTransfer,
  type TransferCall,
} from './transfer-sender.js';

/**
 * hub's own facilitator: verifies exact-EVM payments in process and settles them by submitting
 * `transferWithAuthorization` to an EVM JSON-RPC from a settler key that pays the gas.
 *
 * One settler key per process: transaction nonces are numbered in memory.
 */

export type LocalFacilitatorConfig = {
  rpcUrl: string;
  chainId: number;
  /** Tokens accepted, with their EIP-712 domains. */
  tokens: SettlementToken[];
  settlerPrivateKey: Hex;
  /** The HubEscrow the settler operates, for ceiling-priced calls; none: no reserve-and-pay-actual. */
  escrow?: Address;
  /** Default: native recovery inline, or a worker pool if only pure JS is available. */
  signerRecovery?: SignerRecovery;
  /** Per JSON-RPC request. Default 5 s. */
  rpcTimeoutMs?: number;
  /** How long `settle` waits for the receipt before answering pending. Default 30 s. */
  receiptTimeoutMs?: number;
  /** Receipt polling interval. Default 500 ms. */
  pollingIntervalMs?: number;
  /**
   * Send settlements one after another, in nonce order (`SettlerState.inTurn`): for a node that
   * mines each transaction on arrival (anvil's automine). Default false: a node with a mempool
   * orders a sender's transactions by nonce itself, and sends run side by side.
   */
  sendInOrder?: boolean;
  /**
   * Send with eth_sendRawTransactionSync (EIP-7966) and take the receipt from its answer instead
   * of polling for it: for a node that mines on arrival. A node without the method is sent to the
   * plain way. Default false: on a chain with blocks seconds apart the call would wait that long.
   */
  sendSync?: boolean;
  /** An authorization must stay valid this long after verification. Default 6 s, as x402's facilitator. */
  expiryMarginSeconds?: number;
  /** How far back a repeated settle looks for the first settlement of the same authorization. Default 50,000 blocks. */
  lookbackBlocks?: bigint;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
};

type Failure = VerifyResult & { isValid: false };

/**
 * How a contract call the settler sent ended: mined (with its receipt), reverted on chain, refused
 * before anything was sent (the estimate reverted, or the node refused it), or not known yet.
 */
export type CallOutcome =
  | { status: 'mined'; transaction: Hex; receipt: TransactionReceipt }
  | { status: 'reverted'; transaction: Hex }
  | { status: 'refused'; message: string }
  | { status: 'unknown'; transaction: Hex; message: string };

export class LocalFacilitator implements Facilitator {
  readonly network: `eip155:${number}`;
  readonly tokens: readonly SettlementToken[];
  private readonly clients: SettlerClients;
  private recovery: Promise<SignerRecovery> | undefined;
  /** Broadcast transfers whose outcome is not known yet, by payer and nonce. */
  private readonly pending = new Map<string, SignedTransfer>();
  /**
   * Settlements running now, by payer and nonce: a second settle of the same authorization while
   * the first runs (the pending loop catching up with a slow one) waits for it instead of sending
   * a transaction of its own, which could only revert.
   */
  private readonly running = new Map<string, Promise<SettleResult>>();
  /**
   * Authorizations whose signature recovered to their payer, by everything the signature covers:
   * a settlement checks the signature its verification checked already, and recovering it again
   * would be the same work for the same answer.
   */
  private readonly codeSeen = new ExpiringCache<string, boolean>({ ttlMs: 30_000, maxEntries: 10_000 });
  private readonly signedBy = new ExpiringCache<string, SettlementSignature>({ ttlMs: 15 * 60_000, maxEntries: 10_000 });

  private readonly closeTransport: () => Promise<void>;

  constructor(private readonly config: LocalFacilitatorConfig) {
    this.network = `eip155:${config.chainId}`;
    this.tokens = config.tokens;
    this.recovery = config.signerRecovery && Promise.resolve(config.signerRecovery);
    const chain = evmChain(config.chainId, config.rpcUrl);
    // No transport retries: a retried broadcast that the node already holds comes back as an
    // error, which would turn a sent transfer into a refused one.
    const { transport, close } = rpcTransport(config.rpcUrl, { timeoutMs: config.rpcTimeoutMs ?? 5_000 });
    this.closeTransport = close;
    const pollingInterval = config.pollingIntervalMs ?? 500;
    const account = settlerAccount(config.settlerPrivateKey);
    const reader = createPublicClient({ chain, transport, pollingInterval });
    this.clients = {
      reader,
      wallet: createWalletClient({ account, chain, transport, pollingInterval }),
      state: new SettlerState(reader, account, { inOrder: config.sendInOrder ?? false, sync: config.sendSync ?? false }),
    };
  }

  get settlerAddress(): string {
    return this.clients.wallet.account.address;
  }

  async supported(): Promise<SupportedResponse> {
    return {
      kinds: [{ x402Version: 2, scheme: 'exact', network: this.network }],
      extensions: [],
      signers: { 'eip155:*': [this.settlerAddress] },
    };
  }

  async verify(paymentPayload: unknown, paymentRequirements: unknown): Promise<VerifyResult> {
    const checked = this.checkTerms(paymentPayload, paymentRequirements);
    if ('failure' in checked) return checked.failure;
    const { payment, token } = checked;
    const window = windowFailure(payment.authorization, this.nowSeconds(), this.marginSeconds());
    if (window) return verifyFailure(window, payment.payer);
    const signature = await this.checkSignature(payment, token);
    if ('failure' in signature) return signature.failure;
    if (this.escrowed(payment.authorization, signature.signature)) return contractWalletInEscrow(payment.payer);

    const { from, value } = payment.authorization;
    let balance: bigint;
    let used: boolean;
    try {
      [balance, used] = await Promise.all([
        this.clients.reader.readContract({ address: token.address, abi: eip3009Abi, functionName: 'balanceOf', args: [from] }),
        authorizationUsedOnChain(this.clients, { token: token.address, authorization: payment.authorization }),
      ]);
    } catch (err) {
      // The chain answered, but not with a balance and a nonce state: no EIP-3009 token lives there.
      if (contractAnsweredWithout(err))
        return verifyFailure('wrong_asset', payment.payer, 'No EIP-3009 token answers at the asset address.');
      throw unavailable(err);
    }
    if (used) return verifyFailure('nonce_already_used', payment.payer);
    if (balance < value) return verifyFailure('insufficient_funds', payment.payer);
    return { isValid: true, payer: payment.payer };
  }

  settle(paymentPayload: unknown, paymentRequirements: unknown): Promise<SettleResult> {
    return this.settleCall(paymentPayload, paymentRequirements);
  }

  /**
   * Settles an authorization that pays the escrow: `charged` to the payee, the rest back to the
   * payer, in one transaction. Like `settle`, safe to call again with the same payment.
   */
  settleEscrowed(paymentPayload: unknown, paymentRequirements: unknown, payout: EscrowPayout): Promise<SettleResult> {
    const escrow = this.config.escrow;
    if (!escrow) throw new Error('this facilitator operates no escrow');
    return this.settleCall(paymentPayload, paymentRequirements, { escrow, ...payout });
  }

  private async settleCall(paymentPayload: unknown, paymentRequirements: unknown, split?: EscrowSplit): Promise<SettleResult> {
    const checked = this.checkTerms(paymentPayload, paymentRequirements);
    if ('failure' in checked) return this.failed(checked.failure);
    const { payment, token } = checked;
    let signature: Awaited<ReturnType<LocalFacilitator['checkSignature']>>;
    try {
      signature = await this.checkSignature(payment, token);
    } catch (err) {
      // The chain could not be read to judge the signature: an earlier settlement may be on it.
      if (!(err instanceof FacilitatorUnavailableError)) throw err;
      return { status: 'pending', transaction: undefined, network: this.network, payer: payment.payer, message: err.message };
    }
    if ('failure' in signature) return this.failed(signature.failure);
    if (split && 'contractWallet' in signature.signature) return this.failed(contractWalletInEscrow(payment.payer));
    const call: TransferCall = {
      token: token.address,
      authorization: payment.authorization,
      signature: signature.signature,
      ...(split ? { split } : {}),
    };

    const key = `${payment.payer.toLowerCase()}:${payment.authorization.nonce.toLowerCase()}`;
    const running = this.running.get(key);
    if (running) return running;
    const settlement = this.settleOnce(key, call);
    this.running.set(key, settlement);
    return settlement.finally(() => this.running.delete(key));
  }

  private async settleOnce(key: string, call: TransferCall): Promise<SettleResult> {
    const earlier = this.pending.get(key);
    if (earlier) {
      // If the first broadcast never reached the node, this one does; if it did, this is a no-op.
      await rebroadcastTransfer(this.clients, earlier);
      return this.follow(key, call, earlier);
    }

    // A deposit's payout uses no authorization (the token used it when it moved the deposit): its
    // window does not bound it.
    if (call.split?.deposited) return this.submit(key, call);
    const window = windowFailure(call.authorization, this.nowSeconds(), this.marginSeconds());
    if (window === 'authorization_expired') return this.settledBefore(key, call, window);
    if (window) return this.failed(verifyFailure(window, call.authorization.from));
    return this.submit(key, call);
  }

  /**
   * Sends one settlement transaction and follows it. The first settlement of a kind is simulated
   * for its gas (a refusal then decodes to a reason before anything is sent); later ones reuse
   * that estimate and go out at once, as verification already checked the payment against the
   * chain. `retried`: this is the one resend after a revert that a new simulation passes.
   */
  private async submit(key: string, call: TransferCall, retried = false): Promise<SettleResult> {
    const payer = call.authorization.from;
    const kind = gasKind(call);
    // A contract wallet's check costs what its code makes it cost: each of its transfers is
    // simulated for its own gas, never one remembered from another wallet's (which could be made
    // to cost past a block).
    const ownGas = 'contractWallet' in call.signature;
    let gas = ownGas ? undefined : this.clients.state.knownGas(kind);
    if (gas === undefined) {
      const simulated = await simulateTransfer(this.clients, call);
      // The chain could not be read: an earlier settlement (before a restart) may be on it.
      if (!simulated.ok && simulated.reason === 'facilitator_unavailable') return this.pendingResult(call, undefined, simulated.message);
      if (!simulated.ok) return this.settledBefore(key, call, simulated.reason, simulated.message);
      gas = simulated.gas;
      if (ownGas && gas > CONTRACT_WALLET_TRANSFER_GAS)
        return settleFailure('invalid_signature', {
          network: this.network,
          payer,
          message: 'The wallet’s check costs more gas than hub pays for one.',
        });
      if (!ownGas) this.clients.state.rememberGas(kind, gas);
    }

    const broadcast = await broadcastTransfer(this.clients, call, gas);
    if (broadcast.status === 'refused' && broadcast.reason === 'facilitator_unavailable')
      return this.pendingResult(call, undefined, broadcast.message);
    if (broadcast.status === 'refused')
      return settleFailure(broadcast.reason, { network: this.network, payer, message: broadcast.message });
    if (broadcast.status === 'unknown') {
      this.pending.set(key, broadcast.signed);
      return this.pendingResult(call, broadcast.signed.transaction, broadcast.message);
    }
    return this.follow(key, call, broadcast.signed, retried, broadcast.receipt);
  }

  /**
   * Sends a contract call other than a settlement (a session's deposit) from the settler's key,
   * which pays the gas: estimated first (a call that would revert is refused with the node's
   * reason, nothing sent), sent in the settler's nonce order, and followed to its receipt.
   */
  async sendCall(call: ContractCall): Promise<CallOutcome> {
    const account = this.clients.wallet.account;
    let gas: bigint;
    try {
      gas = await this.clients.reader.estimateGas({ account, ...call });
    } catch (err) {
      if (!nodeAnswered(err)) throw unavailable(err);
      return { status: 'refused', message: shortMessage(err) };
    }
    const broadcast = await broadcastCall(this.clients, call, gas);
    if (broadcast.status === 'refused') {
      if (broadcast.reason === 'facilitator_unavailable')
        throw new FacilitatorUnavailableError('network', `chain RPC: ${broadcast.message}`);
      return { status: 'refused', message: broadcast.message };
    }
    const { transaction } = broadcast.signed;
    if (broadcast.status === 'unknown') return { status: 'unknown', transaction, message: broadcast.message };
    const confirmation: Confirmation = broadcast.receipt
      ? { status: 'mined', receipt: broadcast.receipt }
      : await confirmTransfer(this.clients, transaction, this.config.receiptTimeoutMs ?? 30_000);
    if (confirmation.status === 'unconfirmed') return { status: 'unknown', transaction, message: confirmation.message };
    if (confirmation.receipt.status !== 'success') return { status: 'reverted', transaction };
    return { status: 'mined', transaction, receipt: confirmation.receipt };
  }

  /** Signs EIP-712 typed data with the settler's key (a session's claim batch, as its receiver authorizer). */
  signTypedData(typedData: Parameters<LocalAccount['signTypedData']>[0]): Promise<Hex> {
    return this.clients.wallet.account.signTypedData(typedData);
  }

  /** The reads that judge a signature as the chain does (contract-signature.ts); an unreachable node is `FacilitatorUnavailableError`. */
  // The reader is reached through at each read: the field is set before the constructor makes the clients.
  readonly signatureReads: SignatureReads = signatureReadsOf(
    { call: (c) => this.clients.reader.call(c), getCode: (c) => this.clients.reader.getCode(c) },
    async (read) => {
      try {
        return await read();
      } catch (err) {
        throw unavailable(err);
      }
    },
  );

  /** eth_call at the latest block, for reading a contract's state; an unreachable node is `FacilitatorUnavailableError`. */
  async readCall(call: ContractCall): Promise<Hex> {
    try {
      return (await this.clients.reader.call(call)).data ?? '0x';
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** The latest block's timestamp (unix seconds): the chain's clock; an unreachable node is `FacilitatorUnavailableError`. */
  async blockTime(): Promise<number> {
    try {
      return Number((await this.clients.reader.getBlock({ blockTag: 'latest' })).timestamp);
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** Stops the worker pool, if the default recovery started one, and closes the node's connections. */
  async close(): Promise<void> {
    if (!this.config.signerRecovery && this.recovery) await (await this.recovery).close();
    await this.closeTransport();
  }

  /** Waits for a broadcast transfer (unless its receipt came with the send) and turns its receipt into a result. */
  private async follow(
    key: string,
    call: TransferCall,
    signed: SignedTransfer,
    retried = false,
    receipt?: TransactionReceipt,
  ): Promise<SettleResult> {
    const { transaction } = signed;
    const confirmation: Confirmation = receipt
      ? { status: 'mined', receipt }
      : await confirmTransfer(this.clients, transaction, this.config.receiptTimeoutMs ?? 30_000);
    if (confirmation.status === 'unconfirmed') {
      // Once the authorization has lapsed, an unmined transfer can never move funds. Its nonce may
      // be a gap that the node never saw: number the next transactions from the chain again.
      if (!call.split?.deposited && call.authorization.validBefore <= this.nowSeconds()) {
        this.pending.delete(key);
        this.clients.state.renumber();
        return this.settledBefore(key, call, 'authorization_expired');
      }
      // Nor can one whose nonce another transaction took. Sent anew, as settling twice is safe: a
      // deposit's payout has no authorization to lapse and would otherwise be waited for forever.
      if (!retried && (await nonceTakenByAnother(this.clients, signed))) {
        this.pending.delete(key);
        return this.submit(key, call, true);
      }
      this.pending.set(key, signed);
      return this.pendingResult(call, transaction, confirmation.message);
    }
    this.pending.delete(key);
    if (receiptMovedFunds(confirmation.receipt, call)) return this.settledResult(call, transaction);
    // Reverted. Simulated now, the same call says why (perhaps another transaction of ours settled
    // this authorization first); if it would pass now, the gas remembered was short: once more. Not
    // a contract wallet's: its gas was its own, and a wallet that passes simulations and fails on
    // chain would have hub pay for a second revert.
    const simulated = await simulateTransfer(this.clients, call);
    if (simulated.ok && !retried && !('contractWallet' in call.signature)) {
      this.clients.state.rememberGas(gasKind(call), simulated.gas);
      return this.submit(key, call, true);
    }
    const reason = simulated.ok ? 'transaction_reverted' : simulated.reason;
    return this.settledBefore(key, call, reason, simulated.ok ? undefined : simulated.message, transaction);
  }

  /**
   * A failure that an earlier settlement of the same authorization would explain (nonce used,
   * authorization lapsed, transfer reverted) is checked against the chain: if that settlement
   * paid what this one asks, settling again answers it; otherwise the failure stands. An escrowed
   * authorization someone submitted to the token directly sits in the escrow unpaid: it is paid out.
   */
  private async settledBefore(
    key: string,
    call: TransferCall,
    reason: SettleFailureReason,
    message?: string,
    transaction?: Hex,
  ): Promise<SettleResult> {
    const explicable: SettleFailureReason[] = ['nonce_already_used', 'authorization_expired', 'transaction_reverted'];
    if (explicable.includes(reason)) {
      const lookback = this.config.lookbackBlocks ?? 50_000n;
      try {
        const earlier = await findSettledTransfer(this.clients, call, lookback);
        if (earlier) return this.settledResult(call, earlier, true);
        // Used in the pool only, not in any mined block: a transfer not yet mined took the nonce
        // (this settler's own, sent before a restart, say). Its outcome is not known yet, never a failure.
        if (reason === 'nonce_already_used' && !(await authorizationUsedOnChain(this.clients, call)))
          return this.pendingResult(call, transaction, 'the authorization is taken by a transaction not yet mined');
        if (call.split && !call.split.deposited) {
          const deposit = await findSettledTransfer(this.clients, { ...call, split: undefined }, lookback);
          if (deposit) return this.submit(key, { ...call, split: { ...call.split, deposited: true } });
        }
      } catch (err) {
        // Unsearched, the chain may hold the settlement this failure would hide: not known yet.
        return this.pendingResult(call, transaction, `the chain could not be searched for an earlier settlement: ${shortMessage(err)}`);
      }
    }
    return settleFailure(reason, { network: this.network, payer: call.authorization.from, transaction, message });
  }

  private settledResult(call: TransferCall, transaction: Hex, alreadySettled = false): SettleResult {
    const { from: payer, value } = call.authorization;
    return {
      status: 'settled',
      transaction,
      network: this.network,
      payer,
      // Through the escrow the seller was paid the charge; the rest went back to the payer.
      amount: (call.split ? call.split.charged : value).toString(),
      ...(alreadySettled ? { alreadySettled } : {}),
    };
  }

  private pendingResult(call: TransferCall, transaction: Hex | undefined, message: string): SettleResult {
    return { status: 'pending', transaction, network: this.network, payer: call.authorization.from, message };
  }

  private failed(failure: Failure): SettleResult {
    return settleFailure(failure.reason, { network: this.network, payer: failure.payer, message: failure.message });
  }

  private checkTerms(
    paymentPayload: unknown,
    paymentRequirements: unknown,
  ): { payment: ExactPayment; token: SettlementToken } | { failure: Failure } {
    const parsed = parseExactPayment(paymentPayload, paymentRequirements);
    if ('failure' in parsed) return parsed;
    const terms = checkTerms(parsed.payment, this);
    if ('failure' in terms) return terms;
    return { payment: parsed.payment, token: terms.token };
  }

  /**
   * The payment's signature as the token will take it: the payer's key's (recovered here), or, when
   * no key of the payer's signed it, the payer's own as a contract wallet that says so (ERC-1271,
   * one read of the chain; docs/decisions.md#D-363). ERC-6492 signatures of a wallet not deployed
   * yet are not taken.
   */
  private async checkSignature(
    payment: ExactPayment,
    token: SettlementToken,
  ): Promise<{ signature: SettlementSignature } | { failure: Failure }> {
    const { from, to, value, validAfter, validBefore, nonce } = payment.authorization;
    const signed = `${token.address}:${from}:${to}:${value}:${validAfter}:${validBefore}:${nonce}:${payment.signature}`.toLowerCase();
    const known = this.signedBy.get(signed);
    if (known) return { signature: known };
    const recoverable = parseRecoverableSignature(payment.signature);
    let signature: SettlementSignature | undefined;
    // A payer with code (a contract wallet, or an EOA delegated by EIP-7702) is judged by ERC-1271
    // alone, as the token's `SignatureChecker` judges it, even when its key signed.
    if (recoverable && !(await this.hasCode(payment.payer as Address))) {
      this.recovery ??= defaultSignerRecovery();
      const signer = await (await this.recovery).recoverSigner({
        domain: tokenDomain(token, this.config.chainId),
        authorization: payment.authorization satisfies TransferAuthorization,
        signature: payment.signature,
      });
      if (signer?.toLowerCase() === payment.payer.toLowerCase()) signature = recoverable;
    }
    if (!signature) {
      const digest = bytesToHex(transferAuthorizationDigest(tokenDomain(token, this.config.chainId), payment.authorization));
      if (await contractSigned(this.signatureReads, payment.payer as Address, digest, payment.signature)) {
        // The wallet may answer a read differently from the token's own check: the transfer itself
        // is simulated, as the token will run it, before anything is served on it.
        const contractWallet = { contractWallet: payment.signature };
        const call = { token: token.address, authorization: payment.authorization, signature: contractWallet };
        const simulated = await simulateTransfer(this.clients, call);
        if (!simulated.ok && simulated.reason === 'facilitator_unavailable') throw unavailable(new Error(simulated.message));
        if (!simulated.ok) {
          const reason = simulated.reason === 'insufficient_funds' ? 'insufficient_funds' : 'invalid_signature';
          return { failure: verifyFailure(reason, payment.payer, simulated.message) };
        }
        if (simulated.gas > CONTRACT_WALLET_TRANSFER_GAS)
          return { failure: verifyFailure('invalid_signature', payment.payer, 'The wallet’s check costs more gas than hub pays for one.') };
        signature = contractWallet;
      }
    }
    if (!signature) return { failure: verifyFailure('invalid_signature', payment.payer) };
    this.signedBy.set(signed, signature);
    return { signature };
  }

  /** Whether `account` has code, as seen in the last 30 s (an account gains code rarely: a deployment, a delegation). */
  private async hasCode(account: Address): Promise<boolean> {
    const key = account.toLowerCase();
    const known = this.codeSeen.get(key);
    if (known !== undefined) return known;
    const has = await this.signatureReads.hasCode(account);
    this.codeSeen.set(key, has);
    return has;
  }

  /** A payment into the escrow signed by a contract wallet, which the escrow cannot take (it takes `(v, r, s)` alone). */
  private escrowed(authorization: TransferAuthorization, signature: SettlementSignature): boolean {
    const { escrow } = this.config;
    return 'contractWallet' in signature && escrow !== undefined && authorization.to.toLowerCase() === escrow.toLowerCase();
  }

  private nowSeconds(): bigint {
    return BigInt(Math.floor((this.config.now?.() ?? Date.now()) / 1000));
  }

  private marginSeconds(): bigint {
    return BigInt(this.config.expiryMarginSeconds ?? 6);
  }
}

/** Why a contract wallet cannot pay a ceiling-priced call or a held purchase on this rail. */
function contractWalletInEscrow(payer: string): Failure {
  return verifyFailure('invalid_signature', payer, 'A contract wallet’s payment cannot go through the escrow: pay this price from an EOA.');
}

function unavailable(err: unknown): FacilitatorUnavailableError {
  const message = shortMessage(err);
  const kind = err instanceof Error && /timed? ?out/i.test(err.message) ? 'timeout' : 'network';
  return new FacilitatorUnavailableError(kind, `chain RPC: ${message}`, undefined, { cause: err });
}
