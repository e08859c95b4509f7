import { Agent, type Dispatcher, request } from 'undici';
import {
  type FacilitatorRequest,
  type Network,
  type PaymentPayload,
  type PaymentRequirements,
  type SupportedResponse,
  settleResponseSchema,
  supportedResponseSchema,
  verifyResponseSchema,
} from '../../shared/payments/x402-wire.js';
import type { ChainWitness } from './chain-witness.js';
import type { Facilitator } from './facilitator.js';
import { FacilitatorUnavailableError } from './facilitator.js';
import {
  fromSettleResponse,
  fromVerifyResponse,
  payerOf,
  type SettleFailureReason,
  type SettleResult,
  settleFailure,
  type VerifyResult,
} from './results.js';

/**
 * A remote facilitator over x402's standard HTTP API (`POST /verify`, `POST /settle`,
 * `GET /supported`), over undici.
 *
 * Settling is where the transport matters: a settle request that may have reached the facilitator
 * but got no usable answer (timeout, dropped connection, 5xx, garbage) is reported pending, since
 * the facilitator may have broadcast the transfer. Only a connection that never opened, or a 4xx
 * without a settle body, is a failure.
 */

export type HttpFacilitatorConfig = {
  /** Base URL; `/verify`, `/settle` and `/supported` are appended. */
  url: string;
  /** Deadline for verify and supported, body included. Default 10 s. */
  timeoutMs?: number;
  /** Deadline for settle, which waits for the chain. Default 60 s. */
  settleTimeoutMs?: number;
  /** Headers for each call, e.g. the facilitator's API credentials. */
  headers?: (operation: 'verify' | 'settle' | 'supported') => Record<string, string> | Promise<Record<string, string>>;
  /** Default: an agent of its own, closed by `close()`. */
  dispatcher?: Dispatcher;
  /** Reads the chain for the answers the facilitator's cannot settle (`ChainWitness`); closed by `close()`. */
  witness?: ChainWitness;
};

export type Reply = { status: number; json: unknown };

/** Error codes of a connection that never opened: the request cannot have been received. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** Remote failures that an earlier settlement of the same payment would explain as well. */
const UNRESOLVABLE = new Set<SettleFailureReason>(['nonce_already_used', 'transaction_reverted']);
/**
 * Remote failures the chain decides, when hub can read it: those, and a lapsed authorization,
 * which an earlier settle whose answer was lost may have moved before it lapsed.
 */
const WITNESSED = new Set<SettleFailureReason>([...UNRESOLVABLE, 'authorization_expired']);

/** A failure the facilitator's answer cannot settle: pending, and left to what can read the chain. */
function parked(result: SettleResult & { status: 'failed' }, network: Network): SettleResult {
  return { status: 'pending', transaction: result.transaction, network, message: result.message, unresolvable: true };
}

export class HttpFacilitator implements Facilitator {
  private readonly base: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;

  constructor(private readonly config: HttpFacilitatorConfig) {
    this.base = config.url.replace(/\/+$/, '');
    this.ownsDispatcher = !config.dispatcher;
    this.dispatcher = config.dispatcher ?? new Agent({ connect: { timeout: 5_000 } });
  }

  async verify(paymentPayload: PaymentPayload, paymentRequirements: PaymentRequirements): Promise<VerifyResult> {
    const reply = await this.call('verify', 'POST', body(paymentPayload, paymentRequirements), this.config.timeoutMs ?? 10_000).catch(
      (err) => {
        throw transportError('verify', err);
      },
    );
    // x402 facilitators answer a refused payment with 200 or 400 and a verify body alike.
    const parsed = verifyResponseSchema.safeParse(reply.json);
    if (parsed.success && (reply.status === 200 || reply.status === 400)) return fromVerifyResponse(parsed.data, payerOf(paymentPayload));
    throw badReply('verify', reply);
  }

  async settle(paymentPayload: PaymentPayload, paymentRequirements: PaymentRequirements): Promise<SettleResult> {
    const network = paymentRequirements.network;
    let reply: Reply;
    try {
      reply = await this.call('settle', 'POST', body(paymentPayload, paymentRequirements), this.config.settleTimeoutMs ?? 60_000);
    } catch (err) {
      const message = `settle: ${describe(err)}`;
      if (errorCodes(err).some((code) => NOT_SENT.has(code))) return settleFailure('facilitator_unavailable', { network, message });
      return { status: 'pending', transaction: undefined, network, message };
    }
    const parsed = settleResponseSchema.safeParse(reply.json);
    if (parsed.success) {
      const result = fromSettleResponse(parsed.data, { amount: paymentRequirements.amount, payer: payerOf(paymentPayload) });
      if (result.status !== 'failed') return result;
      // The authorization used (a token's revert says so too): by an earlier settlement of this
      // very payment whose answer was lost, by someone else submitting the same authorization (the
      // seller is paid all the same), or canceled by the payer. The facilitator cannot say which,
      // so it is not a failure: the chain says, when hub can read it; otherwise it is parked.
      const { witness } = this.config;
      if (witness && WITNESSED.has(result.reason)) {
        return (await witness.outcomeOf(paymentPayload, paymentRequirements).catch(() => undefined)) ?? parked(result, network);
      }
      return UNRESOLVABLE.has(result.reason) ? parked(result, network) : result;
    }
    const message = badReply('settle', reply).message;
    if (reply.status >= 400 && reply.status < 500) return settleFailure('facilitator_rejected', { network, message });
    return { status: 'pending', transaction: undefined, network, message };
  }

  /**
   * A `POST /settle` whose answer the caller reads itself (a batch-settlement deposit, claim,
   * settle or refund, whose payloads are not `exact`'s): the facilitator's reply, or why none came
   * and whether the request may have reached it (`sent`: only a connection that never opened is not).
   */
  async settleReply(request: {
    x402Version: number;
    paymentPayload: unknown;
    paymentRequirements: unknown;
  }): Promise<Reply | { failure: string; sent: boolean }> {
    try {
      return await this.call('settle', 'POST', JSON.stringify(request), this.config.settleTimeoutMs ?? 60_000);
    } catch (err) {
      return { failure: `settle: ${describe(err)}`, sent: !errorCodes(err).some((code) => NOT_SENT.has(code)) };
    }
  }

  async supported(): Promise<SupportedResponse> {
    const reply = await this.call('supported', 'GET', undefined, this.config.timeoutMs ?? 10_000).catch((err) => {
      throw transportError('supported', err);
    });
    const parsed = supportedResponseSchema.safeParse(reply.json);
    if (reply.status === 200 && parsed.success) return parsed.data;
    throw badReply('supported', reply);
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
    await this.config.witness?.close();
  }

  /** One request under one deadline covering connect, headers and body. Non-JSON bodies come back as their text. */
  private async call(
    operation: 'verify' | 'settle' | 'supported',
    method: 'GET' | 'POST',
    payload: string | undefined,
    timeoutMs: number,
  ): Promise<Reply> {
    const signal = AbortSignal.timeout(timeoutMs);
    const headers = {
      accept: 'application/json',
      ...(payload ? { 'content-type': 'application/json' } : {}),
      ...(await this.config.headers?.(operation)),
    };
    const response = await request(`${this.base}/${operation}`, { method, headers, body: payload, signal, dispatcher: this.dispatcher });
    const text = await response.body.text();
    try {
      return { status: response.statusCode, json: JSON.parse(text) as unknown };
    } catch {
      return { status: response.statusCode, json: text };
    }
  }
}

function body(paymentPayload: PaymentPayload, paymentRequirements: PaymentRequirements): string {
  const request: FacilitatorRequest = { x402Version: paymentPayload.x402Version, paymentPayload, paymentRequirements };
  return JSON.stringify(request);
}

function transportError(operation: string, err: unknown): FacilitatorUnavailableError {
  const timedOut = err instanceof Error && (err.name === 'TimeoutError' || errorCodes(err).includes('UND_ERR_CONNECT_TIMEOUT'));
  return new FacilitatorUnavailableError(timedOut ? 'timeout' : 'network', `${operation}: ${describe(err)}`, undefined, { cause: err });
}

function badReply(operation: string, reply: Reply): FacilitatorUnavailableError {
  const excerpt = (typeof reply.json === 'string' ? reply.json : JSON.stringify(reply.json)).slice(0, 200);
  if (reply.status !== 200 && reply.status !== 400) {
    return new FacilitatorUnavailableError('http_status', `${operation}: facilitator answered ${reply.status}: ${excerpt}`, reply.status);
  }
  return new FacilitatorUnavailableError('malformed_response', `${operation}: not an x402 ${operation} response: ${excerpt}`, reply.status);
}

function errorCodes(err: unknown): string[] {
  const codes: string[] = [];
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if ('code' in e && typeof e.code === 'string') codes.push(e.code);
  }
  return codes;
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  if (err.name === 'TimeoutError') return 'timed out';
  const code = errorCodes(err)[0];
  return code ? `${code} ${err.message}` : err.message;
}
