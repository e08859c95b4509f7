import type { ErrorBody } from './errors.js';

/**
 * The internal API's wire format, written down once for both ends: each call is a tRPC batch of
 * one, exactly as tRPC's `httpBatchLink` sends it and tRPC's adapter answers it. The proxy's
 * client (proxy/control-plane-client.ts) sends and reads it without tRPC's client; the control-
 * plane's direct lane (control-plane/internal/direct-calls.ts) reads and answers it without tRPC's
 * adapter, for the procedures the contract marks `hotPath`; every other call, and any call with
 * more than the client sends, is tRPC's adapter's to answer
 * (test/control-plane/internal/direct-calls.test.ts holds the two answers equal).
 */

/** What the URL of a call ends with, after `/trpc/internal.<procedure>`. */
export const BATCH_OF_ONE = '?batch=1';

/** The request of one call: a query is a GET with its input in the URL, a mutation a POST of JSON. */
export function callRequest(
  path: string,
  kind: 'query' | 'mutation',
  input: unknown,
): { path: string; method: 'GET' | 'POST'; body?: string } {
  const batch = JSON.stringify({ 0: input });
  if (kind === 'query') return { path: `${path}${BATCH_OF_ONE}&input=${encodeURIComponent(batch)}`, method: 'GET' };
  return { path: `${path}${BATCH_OF_ONE}`, method: 'POST', body: batch };
}

/** What a failed call carries: tRPC's error shape, with hub's envelope and status in `data`. */
export type CallFailure = { message?: unknown; data?: { envelope?: ErrorBody; httpStatus?: number } };
export type CallAnswer = { result: { data: unknown } } | { error: CallFailure };

/** The body of an answer. */
export function answerBody(answer: CallAnswer): string {
  return JSON.stringify([answer]);
}

/** The one answer of a batch of one; undefined when the body is not one. */
export function readAnswer(text: string): CallAnswer | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const answer: unknown = Array.isArray(parsed) ? parsed[0] : undefined;
  if (typeof answer !== 'object' || answer === null) return undefined;
  if ('result' in answer && typeof answer.result === 'object' && answer.result !== null) return answer as CallAnswer;
  if ('error' in answer && typeof answer.error === 'object' && answer.error !== null) return answer as CallAnswer;
  return undefined;
}

/**
 * The inputs of a POSTed batch by index, as tRPC reads a JSON body; undefined when the body is no
 * batch (tRPC's refusal is then the caller's to make).
 */
export function readBatchInputs(text: string): Record<string, unknown> | undefined {
  const inputs: unknown = text ? JSON.parse(text) : undefined;
  if (inputs === undefined) return Object.create(null);
  if (typeof inputs !== 'object' || inputs === null || Array.isArray(inputs)) return undefined;
  return inputs as Record<string, unknown>;
}
