import {
  type Address,
  type Chain,
  encodeFunctionData,
  type Hex,
  keccak256,
  type LocalAccount,
  type PublicClient,
  parseEventLogs,
  type TransactionReceipt,
  TransactionReceiptNotFoundError,
  type Transport,
  type WalletClient,
} from 'viem';
import { nodeAnswered, revertReason, rpcErrorCode, shortMessage } from './chain-errors.js';
import { type EscrowSplit, escrowAbi } from './escrow.js';
import type { SettleFailureReason } from './results.js';
import type { SettlerState } from './settler-state.js';
import type { SettlementSignature, TransferAuthorization } from './transfer-authorization.js';
import { eip3009Abi } from './transfer-authorization.js';

/**
 * The on-chain half of settlement: simulate `transferWithAuthorization` (or the escrow's `settle`
 * of it, for a ceiling-priced call), sign it with the settler's key, broadcast it, wait for it, and
 * find an earlier settlement of the same authorization. The transaction hash is computed before
 * broadcasting, so a broadcast that times out still yields the hash to follow up on.
 */

export type SettlerClients = {
  reader: PublicClient<Transport, Chain>;
  wallet: WalletClient<Transport, Chain, LocalAccount>;
  /** Nonce, fees and gas, kept in memory so that a settlement costs one request to send. */
  state: SettlerState;
};

export type TransferCall = {
  token: Address;
  authorization: TransferAuthorization;
  signature: SettlementSignature;
  /** Set when the authorization pays the escrow: submitted through it, with this payout. */
  split?: EscrowSplit;
};

export type Simulation = { ok: true; gas: bigint } | { ok: false; reason: SettleFailureReason; message: string };

/** A signed transfer transaction: its hash is known before anyone has seen it. */
export type SignedTransfer = { transaction: Hex; serialized: Hex; nonce: number };

export type Broadcast =
  /** `receipt`: the node mined it before answering (eth_sendRawTransactionSync). */
  | { status: 'sent'; signed: SignedTransfer; receipt?: TransactionReceipt }
  /** The node may or may not have the transaction: follow it up, or send it again. */
  | { status: 'unknown'; signed: SignedTransfer; message: string }
  /** Provably not broadcast. */
  | { status: 'refused'; reason: SettleFailureReason; message: string };

export type Confirmation = { status: 'mined'; receipt: TransactionReceipt } | { status: 'unconfirmed'; message: string };

/** The token's `transferWithAuthorization` arguments: `(v, r, s)` for an EOA's signature, the whole `bytes` for a contract wallet's. */
function transferArgs({ authorization: a, signature: s }: TransferCall) {
  const authorization = [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce] as const;
  // viem picks the overload by the arguments' shape; its types know only the first.
  if ('contractWallet' in s) return [...authorization, s.contractWallet] as unknown as readonly [...typeof authorization, number, Hex, Hex];
  return [...authorization, s.v, s.r, s.s] as const;
}

function escrowArgs({ token, authorization: a, signature: s }: TransferCall, split: EscrowSplit) {
  // The escrow takes `(v, r, s)` alone: a contract wallet's payment never reaches it (local-facilitator.ts).
  if ('contractWallet' in s) throw new Error('the escrow takes EOA signatures only');
  const authorization = { from: a.from, value: a.value, validAfter: a.validAfter, validBefore: a.validBefore, nonce: a.nonce };
  return [token, authorization, { v: s.v, r: s.r, s: s.s }, split.payee, split.charged, split.deposited ?? false] as const;
}

/** The contract the settlement calls and its calldata. */
function settlementCall(call: TransferCall): { to: Address; data: Hex } {
  if (call.split) {
    return {
      to: call.split.escrow,
      data: encodeFunctionData({ abi: escrowAbi, functionName: 'settle', args: escrowArgs(call, call.split) }),
    };
  }
  return {
    to: call.token,
    data: encodeFunctionData({ abi: eip3009Abi, functionName: 'transferWithAuthorization', args: transferArgs(call) }),
  };
}

/** eth_estimateGas of the settlement: a simulation whose revert decodes to a reason, and the gas to send with. */
export async function simulateTransfer(clients: SettlerClients, call: TransferCall): Promise<Simulation> {
  const account = clients.wallet.account;
  try {
    const gas = call.split
      ? await clients.reader.estimateContractGas({
          address: call.split.escrow,
          abi: escrowAbi,
          functionName: 'settle',
          args: escrowArgs(call, call.split),
          account,
        })
      : await clients.reader.estimateContractGas({
          address: call.token,
          abi: eip3009Abi,
          functionName: 'transferWithAuthorization',
          args: transferArgs(call),
          account,
        });
    return { ok: true, gas };
  } catch (err) {
    const revert = revertReason(err);
    if (revert) return { ok: false, ...revert };
    return { ok: false, reason: 'facilitator_unavailable', message: shortMessage(err) };
  }
}

/**
 * What a kind of settlement is remembered by for its gas: a transfer of a token, or an escrow
 * payout of a given shape (which transfers it makes).
 */
export function gasKind(call: TransferCall): string {
  const { split } = call;
  // A contract wallet's signature costs the wallet's own check on top: remembered apart.
  if (!split) return `transfer:${call.token}${'contractWallet' in call.signature ? ':contract-wallet' : ''}`;
  return `escrow:${split.escrow}:${split.charged > 0n}:${split.charged < call.authorization.value}:${split.deposited === true}`;
}

/**
 * Signs the settlement with the settler's key (nonce, fees and chain id from memory) and sends it:
 * one JSON-RPC request, in nonce order (`SettlerState.inTurn`). `gas` is an estimate for this kind
 * of settlement; unused gas is not paid for, so the limit has generous headroom.
 */
export function broadcastTransfer(clients: SettlerClients, call: TransferCall, gas: bigint): Promise<Broadcast> {
  return broadcastCall(clients, settlementCall(call), gas);
}

/** A contract call the settler signs and sends, as a settlement is sent: `broadcastTransfer` for any calldata. */
export type ContractCall = { to: Address; data: Hex };

export async function broadcastCall(clients: SettlerClients, call: ContractCall, gas: bigint): Promise<Broadcast> {
  // Another process settling with the same key (a replica, a restart) took the nonce first: the
  // node refused this one outright, so it can be signed again under a nonce counted afresh. Busy
  // replicas may take the next one too; a few tries, then the refusal stands.
  let broadcast = await broadcastOnce(clients, call, gas);
  for (let tries = 1; tries < NONCE_TRIES && broadcast.status === 'refused' && broadcast.nonceTaken; tries++) {
    broadcast = await broadcastOnce(clients, call, gas);
  }
  return broadcast;
}

const NONCE_TRIES = 4;

/** How nodes (geth, anvil, reth) refuse a transaction whose nonce another one already holds. */
const NONCE_TAKEN = /nonce too low|nonce has already been used|already known|replacement transaction underpriced/i;

function broadcastOnce(clients: SettlerClients, call: ContractCall, gas: bigint): Promise<Broadcast & { nonceTaken?: boolean }> {
  const { wallet, reader, state } = clients;
  return state.inTurn(async () => {
    let serialized: Hex;
    let nonce: number;
    try {
      let fees: Awaited<ReturnType<SettlerState['currentFees']>>;
      [nonce, fees] = await Promise.all([state.takeNonce(), state.currentFees()]);
      serialized = await wallet.account.signTransaction({
        type: 'eip1559',
        chainId: wallet.chain.id,
        nonce,
        gas: (gas * 3n) / 2n,
        ...fees,
        ...call,
      });
    } catch (err) {
      state.renumber();
      return { status: 'refused', reason: 'facilitator_unavailable', message: shortMessage(err) };
    }
    const signed = { transaction: keccak256(serialized), serialized, nonce };
    try {
      if (state.sendsSync) {
        const sent = await sendSync(clients, signed);
        if (sent) return sent;
      }
      await reader.sendRawTransaction({ serializedTransaction: serialized });
      return { status: 'sent', signed };
    } catch (err) {
      if (!nodeAnswered(err)) return { status: 'unknown', signed, message: shortMessage(err) };
      state.renumber();
      // The node's own words are in the error's details, below the client's summary.
      const nonceTaken = NONCE_TAKEN.test(err instanceof Error ? err.message : String(err));
      return { status: 'refused', reason: 'transaction_rejected', message: shortMessage(err), nonceTaken };
    }
  });
}

/** EIP-7966 codes for a transaction the node took but has no receipt for yet: 4 timed out, 5 not ready to run. */
const TAKEN_WITHOUT_RECEIPT = new Set([4, 5]);
const METHOD_NOT_FOUND = -32601;

/**
 * Sends with eth_sendRawTransactionSync (EIP-7966): the node answers with the receipt once the
 * transaction is mined, which saves the receipt's request and its polling. Undefined when the
 * node does not know the method: the transaction never reached it, and the settler sends the
 * plain way from then on. Other failures are thrown, as the plain send throws them.
 */
async function sendSync(clients: SettlerClients, signed: SignedTransfer): Promise<Broadcast | undefined> {
  try {
    const receipt = await clients.reader.sendRawTransactionSync({ serializedTransaction: signed.serialized, throwOnReceiptRevert: false });
    return { status: 'sent', signed, receipt };
  } catch (err) {
    const code = rpcErrorCode(err);
    if (code !== undefined && TAKEN_WITHOUT_RECEIPT.has(code)) return { status: 'sent', signed };
    if (code === METHOD_NOT_FOUND) {
      clients.state.sendsSync = false;
      return undefined;
    }
    throw err;
  }
}

/**
 * Sends an already signed transfer again: same bytes, same hash, so it cannot pay twice. A node
 * that already has it refuses it ("already known", "nonce too low"), which is fine either way.
 */
export async function rebroadcastTransfer(clients: SettlerClients, signed: SignedTransfer): Promise<void> {
  await clients.reader.sendRawTransaction({ serializedTransaction: signed.serialized }).catch(() => undefined);
}

/**
 * True when the chain has mined another transaction of the settler's under `signed`'s nonce, so
 * that `signed` can never be mined: a transaction sent after the numbering was counted from the
 * chain again took the nonce of one that had not reached the node. False when it cannot tell.
 */
export async function nonceTakenByAnother(clients: SettlerClients, signed: SignedTransfer): Promise<boolean> {
  const address = clients.wallet.account.address;
  const mined = await clients.reader.getTransactionCount({ address, blockTag: 'latest' }).catch(() => undefined);
  if (mined === undefined || signed.nonce >= mined) return false;
  // Mined under that nonce: this transaction itself (just now), or another.
  return clients.reader.getTransactionReceipt({ hash: signed.transaction }).then(
    () => false,
    (err) => err instanceof TransactionReceiptNotFoundError,
  );
}

/**
 * The receipt, read at once (a chain that mines on arrival has it already), else polled for at
 * the reader's polling interval until `timeoutMs`. Polled by hash rather than per new block: a
 * quiet chain that mined the transaction just after a look may show no further block for long.
 */
export async function confirmTransfer(clients: SettlerClients, transaction: Hex, timeoutMs: number): Promise<Confirmation> {
  const deadline = Date.now() + timeoutMs;
  const interval = Math.max(1, clients.reader.pollingInterval || 0);
  for (;;) {
    let lastError: unknown;
    try {
      return { status: 'mined', receipt: await clients.reader.getTransactionReceipt({ hash: transaction }) };
    } catch (err) {
      lastError = err; // not mined yet, or the read failed: look again
    }
    const left = deadline - Date.now();
    if (left <= 0) return { status: 'unconfirmed', message: `not mined within ${timeoutMs} ms: ${shortMessage(lastError)}` };
    await new Promise((resolve) => setTimeout(resolve, Math.min(interval, left)));
  }
}

/**
 * True when a mined receipt settled the call: moved exactly `value` from `from` to `to` in `token`
 * or, through the escrow, paid this authorization out with the split asked for.
 */
export function receiptMovedFunds(receipt: TransactionReceipt, call: Pick<TransferCall, 'token' | 'authorization' | 'split'>): boolean {
  if (receipt.status !== 'success') return false;
  const { token, authorization, split } = call;
  if (split) {
    const payouts = parseEventLogs({ abi: escrowAbi, eventName: 'Settled', logs: receipt.logs, strict: true });
    return payouts.some(
      (log) =>
        log.address.toLowerCase() === split.escrow.toLowerCase() &&
        log.args.token.toLowerCase() === token.toLowerCase() &&
        log.args.payer.toLowerCase() === authorization.from.toLowerCase() &&
        log.args.nonce.toLowerCase() === authorization.nonce.toLowerCase() &&
        log.args.payee.toLowerCase() === split.payee.toLowerCase() &&
        log.args.charged === split.charged,
    );
  }
  const transfers = parseEventLogs({ abi: eip3009Abi, eventName: 'Transfer', logs: receipt.logs, strict: true });
  return transfers.some(
    (log) =>
      log.address.toLowerCase() === token.toLowerCase() &&
      log.args.from.toLowerCase() === authorization.from.toLowerCase() &&
      log.args.to.toLowerCase() === authorization.to.toLowerCase() &&
      log.args.value === authorization.value,
  );
}

/**
 * Whether the authorization's nonce is used as of the latest mined block: a transaction still in
 * the pool does not count (a node may simulate against its pending block, where it does). Throws
 * when the chain cannot be read.
 */
export function authorizationUsedOnChain(
  clients: Pick<SettlerClients, 'reader'>,
  call: Pick<TransferCall, 'token' | 'authorization'>,
): Promise<boolean> {
  return clients.reader.readContract({
    address: call.token,
    abi: eip3009Abi,
    functionName: 'authorizationState',
    args: [call.authorization.from, call.authorization.nonce],
    blockTag: 'latest',
  });
}

/**
 * The transaction that already settled this call's authorization, if any within the last
 * `lookbackBlocks`: the transfer that used its nonce to pay exactly what it authorizes or, through
 * the escrow, its payout. Makes settling the same payment twice answer the first settlement
 * instead of "nonce already used". Throws when the chain cannot be read.
 */
export async function findSettledTransfer(
  clients: Pick<SettlerClients, 'reader'>,
  call: Pick<TransferCall, 'token' | 'authorization' | 'split'>,
  lookbackBlocks: bigint,
  head?: bigint,
): Promise<Hex | undefined> {
  head ??= await clients.reader.getBlockNumber();
  const range = { fromBlock: head > lookbackBlocks ? head - lookbackBlocks : 0n, toBlock: head };
  const { token, authorization } = call;
  const logs = call.split
    ? await clients.reader.getContractEvents({
        address: call.split.escrow,
        abi: escrowAbi,
        eventName: 'Settled',
        args: { token, payer: authorization.from, nonce: authorization.nonce },
        ...range,
      })
    : await clients.reader.getContractEvents({
        address: token,
        abi: eip3009Abi,
        eventName: 'AuthorizationUsed',
        args: { authorizer: authorization.from, nonce: authorization.nonce },
        ...range,
      });
  for (const log of logs) {
    const receipt = await clients.reader.getTransactionReceipt({ hash: log.transactionHash });
    // An escrow pays an authorization out once, whatever the split: that payout is the settlement.
    if (call.split ? receipt.status === 'success' : receiptMovedFunds(receipt, call)) return receipt.transactionHash;
  }
  return undefined;
}
