import type { Account, Chain, PublicClient, Transport } from 'viem';
import { turns } from '../../runtime/turns.js';

/**
 * What the settler remembers between transactions so that sending one needs a single JSON-RPC
 * request (the broadcast): its next nonce, numbered in memory from the chain's pending count;
 * the current fees, read at most every `feeTtlMs`; the gas each kind of settlement takes,
 * estimated once; and whose turn it is to send (`inTurn`). One settler key per process: another
 * sender on the same key would take nonces behind its back (the nonce is then renumbered from the
 * chain after a refusal).
 */
export class SettlerState {
  private nextNonce: number | undefined;
  private loadingNonce: Promise<number> | undefined;
  private fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint; readAt: number } | undefined;
  private readonly gasByKind = new Map<string, bigint>();
  private readonly feeTtlMs: number;
  /**
   * With `inOrder`, a settlement takes its nonce and broadcasts in its turn, so transactions reach
   * the node in nonce order: a node that mines on arrival (anvil's automine) can leave a
   * transaction that overtook its predecessor unmined until another arrives. A turn is usually
   * one request (the nonce and fees come from memory), so it caps a settler at one send per round trip: fine on loopback, not for a remote
   * node, which orders a sender's transactions by nonce itself. Receipts are awaited side by side
   * either way.
   */
  readonly inTurn: <T>(send: () => Promise<T>) => Promise<T>;
  /**
   * Send with eth_sendRawTransactionSync (EIP-7966), which answers with the receipt: for a node
   * that mines on arrival. Turned off for good when the node does not know the method.
   */
  sendsSync: boolean;

  constructor(
    private readonly reader: PublicClient<Transport, Chain>,
    private readonly account: Account,
    { inOrder = false, sync = false, feeTtlMs = 2_000 }: { inOrder?: boolean; sync?: boolean; feeTtlMs?: number } = {},
  ) {
    this.sendsSync = sync;
    // A node that stops answering holds each later send up by a second, not by the whole RPC
    // timeout of every send before it.
    this.inTurn = inOrder ? turns({ maxWaitMs: 1_000 }) : (send) => send();
    this.feeTtlMs = feeTtlMs;
  }

  /** The next nonce, taken: settlements running at once each get their own. */
  async takeNonce(): Promise<number> {
    if (this.nextNonce === undefined) {
      this.loadingNonce ??= this.reader
        .getTransactionCount({ address: this.account.address, blockTag: 'pending' })
        .finally(() => (this.loadingNonce = undefined));
      const counted = await this.loadingNonce;
      this.nextNonce ??= counted;
    }
    return this.nextNonce++;
  }

  /**
   * Forgets the numbering: the next nonce is counted from the chain again. For when a nonce was
   * taken by a transaction that never reached the node, which would otherwise hold every later
   * transaction of the settler behind the gap.
   */
  renumber(): void {
    this.nextNonce = undefined;
  }

  async currentFees(): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> {
    const now = Date.now();
    if (!this.fees || now - this.fees.readAt > this.feeTtlMs) {
      const { maxFeePerGas, maxPriorityFeePerGas } = await this.reader.estimateFeesPerGas();
      this.fees = { maxFeePerGas, maxPriorityFeePerGas, readAt: now };
    }
    return this.fees;
  }

  /** The gas limit a kind of settlement was last estimated to need, if it has been. */
  knownGas(kind: string): bigint | undefined {
    return this.gasByKind.get(kind);
  }

  rememberGas(kind: string, estimate: bigint): void {
    this.gasByKind.set(kind, estimate);
  }
}
