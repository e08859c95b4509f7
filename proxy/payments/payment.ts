import { inSpan } from '../../runtime/tracing.js';
import type { CapturedUsage, ClaimedPayment, PaymentProtocol, SettledRequest, SettleOutcome } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { HUB_HEADERS } from '../../shared/hub-headers.js';
import { PAYMENT_RECEIPT_HEADER } from '../../shared/payments/mpp/index.js';
import { encodeHeaderJson, X402_HEADERS } from '../../shared/payments/x402-headers.js';
import { settledAttributes, traceAttributes } from '../../shared/trace-attributes.js';
import type { ProxyServices } from '../context.js';
import type { PayRequest } from '../paid-call/pay-request.js';
import { mppReceipt } from './mpp.js';

/**
 * The payment behind a paid retry, in the two halves of its life: `claim` before the request is
 * forwarded (the control-plane admits it once: byte-identical to the challenged request, verified,
 * not replayed), `settle` once the seller answered (charged only after a 2xx, at what was used).
 * Per-call payments today; purchases and top-ups are paid the same way.
 */
export class Payment {
  private settled: Promise<SettledRequest> | undefined;

  private constructor(
    private readonly services: ProxyServices,
    readonly paymentId: string,
    readonly protocol: PaymentProtocol,
    readonly claimed: ClaimedPayment,
  ) {}

  /** The request's payment, admitted; undefined when it carries none. Refusals throw the spec's errors. */
  static async claim(services: ProxyServices, request: PayRequest): Promise<Payment | undefined> {
    const { proof } = request;
    if (proof.kind !== 'paid') return undefined;
    const attributes = traceAttributes({ paymentId: proof.paymentId, protocol: proof.protocol, sellerId: request.seller.id });
    const claimed = await inSpan(
      services.tracing,
      'payment.claim',
      async (span) => {
        // The payload (signature and authorization) goes to the control-plane, never on the span.
        const claimed = await services.controlPlane.call('claimPaidRequest', {
          paymentId: proof.paymentId,
          sellerId: request.seller.id,
          method: request.method,
          pathAndQuery: request.target,
          bodyDigest: request.bodyDigest,
          protocol: proof.protocol,
          payload: proof.payload,
        });
        span?.setAttributes(traceAttributes({ status: 'claimed', requestId: claimed.requestId }));
        return claimed;
      },
      { attributes },
    ).catch((err: unknown) => {
      throw withX402Refusal(err);
    });
    return new Payment(services, proof.paymentId, proof.protocol, claimed);
  }

  /** A call the agent's credit paid (the control-plane drew it instead of challenging): settled like any payment. */
  static fromCredit(services: ProxyServices, paymentId: string, claimed: ClaimedPayment): Payment {
    return new Payment(services, paymentId, 'x402', claimed);
  }

  /**
   * Settles (or, for a status other than 2xx, releases) the payment once, with the usage captured
   * from the response, and returns the billing headers of the response to the agent and what
   * `hub-usage-error` says of that usage, if anything.
   */
  async settle(upstreamStatus: number, usage?: CapturedUsage): Promise<{ headers: Record<string, string>; usageError?: string }> {
    this.settled ??= inSpan(
      this.services.tracing,
      'payment.settle',
      async (span) => {
        const settled = await this.services.controlPlane.call('settlePaidRequest', {
          paymentId: this.paymentId,
          upstreamStatus,
          ...(usage ? { usage } : {}),
        });
        span?.setAttributes(settledAttributes(settled));
        return settled;
      },
      { attributes: traceAttributes({ paymentId: this.paymentId, protocol: this.protocol, httpStatus: upstreamStatus }) },
    );
    let settled: SettledRequest;
    try {
      settled = await this.settled;
    } catch (err) {
      return { headers: this.unknownOutcome(upstreamStatus, err) };
    }
    const headers = billingHeaders(settled, this.protocol);
    return settled.usageError ? { headers, usageError: settled.usageError } : { headers };
  }

  /**
   * The control-plane's answer to the settlement was lost (it stopped, or could not be reached):
   * the seller's answer still goes to the agent, who paid for it. Whether the payment settles is not
   * known here, so a delivered answer says `settling` with nothing more, never a failure that would
   * send the agent to pay again; the control-plane finishes what it recorded (`settling`), and a
   * payment it never heard of lapses unsettled.
   */
  private unknownOutcome(upstreamStatus: number, err: unknown): Record<string, string> {
    this.services.logger.error(
      { err, paymentId: this.paymentId },
      'the settlement’s outcome is not known: the control-plane did not answer',
    );
    const delivered = upstreamStatus >= 200 && upstreamStatus <= 299;
    return delivered ? { [HUB_HEADERS.billing]: JSON.stringify({ status: 'settling' }) } : {};
  }

  /** Releases the payment of a request that never got an answer; a failure leaves it to expire unsettled. */
  release(): Promise<void> {
    return this.settle(502).then(
      () => undefined,
      () => undefined,
    );
  }
}

/**
 * A refused session payment carries the x402 requirements to pay again with (a corrective 402's
 * hold the channel's state): they go in `payment-required` too, as the x402 document whose `error`
 * is the scheme's code, which is where an x402 client reads a refusal of its paid retry.
 */
function withX402Refusal(err: unknown): unknown {
  if (!(err instanceof ApiError) || !Array.isArray(err.extra.accepts)) return err;
  const { x402Version, settlementReason, accepts } = err.extra;
  err.headers[X402_HEADERS.required] = encodeHeaderJson({ x402Version, error: settlementReason, accepts });
  return err;
}

/**
 * Headers of a paid response (spec: Response to the agent): `hub-billing`, the receipt (x402's
 * `payment-response` or MPP's `payment-receipt`, once settled), `hub-usage-adjusted` when a quantity
 * was clipped, `hub-usage-error` when the settlement failed after delivery. Identity-only and
 * released requests carry none.
 */
export function billingHeaders(outcome: SettleOutcome, protocol: PaymentProtocol): Record<string, string> {
  const headers: Record<string, string> = {};
  if (outcome.kind === 'released' || outcome.kind === 'identity') return headers;
  if (outcome.adjusted.length) headers[HUB_HEADERS.usageAdjusted] = JSON.stringify(outcome.adjusted);
  if (outcome.kind === 'failed') {
    headers[HUB_HEADERS.usageError] = 'settlement_failed';
    return headers;
  }
  const { billing } = outcome;
  // While settling, the amounts are withheld (spec: States and transitions).
  headers[HUB_HEADERS.billing] = JSON.stringify(
    billing.status === 'settled'
      ? billing
      : { status: 'settling', remainderHandling: billing.remainderHandling, settleTransactionHash: billing.settleTransactionHash },
  );
  // A receipt says the payment moved on chain: none for a charge of zero (nothing settles), and none
  // while settling (the transaction, if sent, is in hub-billing), in either protocol.
  // A session's voucher moves nothing on chain, and its receipt says so (an empty transaction)
  // with what was charged on the channel: the client keeps count from it.
  const { receipt } = outcome;
  if (!receipt || billing.status !== 'settled') return headers;
  if (protocol === 'mpp') {
    if (receipt.transaction) headers[PAYMENT_RECEIPT_HEADER] = mppReceipt(receipt.transaction);
  } else if (receipt.transaction || receipt.extra) headers[X402_HEADERS.response] = encodeHeaderJson(receipt);
  return headers;
}
