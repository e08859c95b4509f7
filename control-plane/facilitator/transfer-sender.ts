import {
  type Account,
  type Address,
  type Chain,
  encodeFunctionData,
  type Hex,
  keccak256,
  type PublicClient,
  parseEventLogs,
  type TransactionReceipt,
  type Transport,
  type WalletClient,
} from 'viem';
import { nodeAnswered, revertReason } from './chain-errors.js';
import type { SettleFailureReason } from './results.js';
import type { RecoverableSignature, TransferAuthorization } from './transfer-authorization.js';
import { eip3009Abi } from './transfer-authorization.js';

/**
 * The on-chain half of settlement: simulate `transferWithAuthorization`, sign it with the settler's
 * key, broadcast it, wait for it, and find an earlier transfer of the same authorization. The
 * transaction hash is computed before broadcasting, so a broadcast that times out still yields the
 * hash to follow up on.
 */

export type SettlerClients = {
  reader: PublicClient<Transport, Chain>;
  wallet: WalletClient<Transport, Chain, Account>;
};

export type TransferCall = { token: Address; authorization: TransferAuthorization; signature: RecoverableSignature };

export type Simulation = { ok: true; gas: bigint } | { ok: false; reason: SettleFailureReason; message: string };

/** A signed transfer transaction: its hash is known before anyone has seen it. */
export type SignedTransfer = { transaction: Hex; serialized: Hex };

export type Broadcast =
  | { status: 'sent'; signed: SignedTransfer }
  /** The node may or may not have the transaction: follow it up, or send it again. */
  | { status: 'unknown'; signed: SignedTransfer; message: string }
  /** Provably not broadcast. */
  | { status: 'refused'; reason: SettleFailureReason; message: string };

export type Confirmation = { status: 'mined'; receipt: TransactionReceipt } | { status: 'unconfirmed'; message: string };

function transferArgs({ authorization: a, signature: s }: TransferCall) {
  return [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, s.v, s.r, s.s] as const;
}

/** eth_estimateGas of the transfer: a simulation whose revert decodes to a reason, and the gas to send with. */
export async function simulateTransfer(clients: SettlerClients, call: TransferCall): Promise<Simulation> {
  try {
    const gas = await clients.reader.estimateContractGas({
      address: call.token,
      abi: eip3009Abi,
      functionName: 'transferWithAuthorization',
      args: transferArgs(call),
      account: clients.wallet.account,
    });
    return { ok: true, gas };
  } catch (err) {
    const revert = revertReason(err);
    if (revert) return { ok: false, ...revert };
    return { ok: false, reason: 'facilitator_unavailable', message: shortMessage(err) };
  }
}

export async function broadcastTransfer(clients: SettlerClients, call: TransferCall, gas: bigint): Promise<Broadcast> {
  const { wallet, reader } = clients;
  const account = wallet.account;
  // Settles run concurrently: the account's nonce manager numbers them (viem only uses it when told).
  const nonceManager = 'nonceManager' in account ? account.nonceManager : undefined;
  const releaseNonce = () => renumberNonces(clients);
  let serialized: Hex;
  try {
    const request = await wallet.prepareTransactionRequest({
      nonceManager,
      to: call.token,
      data: encodeFunctionData({ abi: eip3009Abi, functionName: 'transferWithAuthorization', args: transferArgs(call) }),
      // A little headroom over the estimate: state may shift between simulation and mining.
      gas: (gas * 12n) / 10n,
    });
    serialized = await wallet.signTransaction(request);
  } catch (err) {
    releaseNonce();
    return { status: 'refused', reason: 'facilitator_unavailable', message: shortMessage(err) };
  }
  const signed = { transaction: keccak256(serialized), serialized };
  try {
    await reader.sendRawTransaction({ serializedTransaction: serialized });
    return { status: 'sent', signed };
  } catch (err) {
    if (!nodeAnswered(err)) return { status: 'unknown', signed, message: shortMessage(err) };
    releaseNonce();
    return { status: 'refused', reason: 'transaction_rejected', message: shortMessage(err) };
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
 * Forgets the locally numbered nonces, so the next transaction takes its nonce from the chain: for
 * when a nonce was taken by a transaction that never reached the node, which would otherwise hold
 * every later transaction of the settler behind the gap.
 */
export function renumberNonces(clients: SettlerClients): void {
  const account = clients.wallet.account;
  if ('nonceManager' in account) account.nonceManager?.reset({ address: account.address, chainId: clients.wallet.chain.id });
}

export async function confirmTransfer(clients: SettlerClients, transaction: Hex, timeoutMs: number): Promise<Confirmation> {
  try {
    return { status: 'mined', receipt: await clients.reader.waitForTransactionReceipt({ hash: transaction, timeout: timeoutMs }) };
  } catch (err) {
    return { status: 'unconfirmed', message: shortMessage(err) };
  }
}

/** True when a mined receipt moved exactly `value` from `from` to `to` in `token`. */
export function receiptMovedFunds(receipt: TransactionReceipt, token: Address, authorization: TransferAuthorization): boolean {
  if (receipt.status !== 'success') return false;
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
 * The transaction that already used this authorization's nonce to pay exactly what it authorizes,
 * if any within the last `lookbackBlocks`: makes settling the same payment twice answer the first
 * settlement instead of "nonce already used". Throws when the chain cannot be read.
 */
export async function findSettledTransfer(
  clients: SettlerClients,
  token: Address,
  authorization: TransferAuthorization,
  lookbackBlocks: bigint,
): Promise<Hex | undefined> {
  const head = await clients.reader.getBlockNumber();
  const logs = await clients.reader.getContractEvents({
    address: token,
    abi: eip3009Abi,
    eventName: 'AuthorizationUsed',
    args: { authorizer: authorization.from, nonce: authorization.nonce },
    fromBlock: head > lookbackBlocks ? head - lookbackBlocks : 0n,
    toBlock: head,
  });
  for (const log of logs) {
    const receipt = await clients.reader.getTransactionReceipt({ hash: log.transactionHash });
    if (receiptMovedFunds(receipt, token, authorization)) return receipt.transactionHash;
  }
  return undefined;
}

function shortMessage(err: unknown): string {
  if (err instanceof Error)
    return ('shortMessage' in err && typeof err.shortMessage === 'string' ? err.shortMessage : err.message).split('\n')[0]!;
  return String(err);
}
