import { Agent } from 'undici';
import {
  CONTROL_PLANE_CALL_TIMEOUT_MS,
  contract,
  type ProcedureInput,
  type ProcedureName,
  type ProcedureOutput,
} from '../shared/contract.js';
import { ApiError, type ErrorBody } from '../shared/errors.js';

/** A call the proxy makes to the control-plane; refusals arrive as the `ApiError` the control-plane threw. */
export type ControlPlaneClient = {
  call<Name extends ProcedureName>(name: Name, ...input: CallInput<Name>): Promise<ProcedureOutput<Name>>;
};
type CallInput<Name extends ProcedureName> = undefined extends ProcedureInput<Name> ? [] : [ProcedureInput<Name>];

/**
 * Keep-alive connections to the control-plane; the proxy calls it on cache misses and payments.
 *
 * Each call is a tRPC batch of one, as tRPC's own `httpBatchLink` sends it (a query as a GET with
 * its input in the URL, a mutation as a POST of JSON), sent with undici's `request`: the control-
 * plane sees the same requests, and the proxy skips the fetch-based client's machinery, which
 * cost it more than half a millisecond of CPU per call.
 */
export function createControlPlaneClient(
  baseUrl: string,
  internalToken: string,
): { client: ControlPlaneClient; close: () => Promise<void> } {
  const dispatcher = new Agent({
    keepAliveTimeout: 30_000,
    connections: 32,
    headersTimeout: CONTROL_PLANE_CALL_TIMEOUT_MS,
    bodyTimeout: CONTROL_PLANE_CALL_TIMEOUT_MS,
  });
  const origin = new URL(baseUrl);
  const prefix = `${origin.pathname.replace(/\/$/, '')}/trpc/internal.`;
  const authorization = `Bearer ${internalToken}`;
  const client: ControlPlaneClient = {
    async call(name, ...[input]) {
      const batch = JSON.stringify({ 0: input });
      const query = contract[name].kind === 'query';
      const res = await dispatcher.request({
        origin: origin.origin,
        path: query ? `${prefix}${name}?batch=1&input=${encodeURIComponent(batch)}` : `${prefix}${name}?batch=1`,
        method: query ? 'GET' : 'POST',
        headers: query ? { authorization } : { authorization, 'content-type': 'application/json' },
        ...(query ? {} : { body: batch }),
      });
      const text = await res.body.text();
      const answer = answerOf(text);
      if (answer && 'result' in answer) return answer.result.data as never;
      throw (
        (answer && refusalOf(answer.error)) ?? new Error(`control-plane call ${name} failed: ${res.statusCode} ${describe(answer, text)}`)
      );
    },
  };
  return { client, close: () => dispatcher.close() };
}

type Failure = { message?: unknown; data?: { envelope?: ErrorBody; httpStatus?: number } };
type Answer = { result: { data: unknown } } | { error: Failure };

/** The one answer of a batch of one; undefined when the body is not one. */
function answerOf(text: string): Answer | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const answer: unknown = Array.isArray(parsed) ? parsed[0] : undefined;
  if (typeof answer !== 'object' || answer === null) return undefined;
  if ('result' in answer && typeof answer.result === 'object' && answer.result !== null) return answer as Answer;
  if ('error' in answer && typeof answer.error === 'object' && answer.error !== null) return answer as Answer;
  return undefined;
}

/**
 * The `ApiError` a failed call carries in the spec's envelope (trpc/init.ts puts it there); an
 * unexpected failure (a 500, no envelope) is none.
 */
function refusalOf(error: Failure): ApiError | undefined {
  const data = error.data;
  if (!data?.envelope || typeof data.envelope.error !== 'string' || !data.httpStatus || data.httpStatus === 500) return undefined;
  return ApiError.fromBody(data.httpStatus, data.envelope);
}

function describe(answer: Answer | undefined, text: string): string {
  if (answer && 'error' in answer && typeof answer.error.message === 'string') return answer.error.message;
  return text.slice(0, 200);
}
