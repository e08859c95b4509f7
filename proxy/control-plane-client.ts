import { Agent, type Dispatcher } from 'undici';
import { type Tracing, withTraceContext } from '../runtime/tracing.js';
import {
  CONTROL_PLANE_CALL_TIMEOUT_MS,
  contract,
  type ProcedureInput,
  type ProcedureName,
  type ProcedureOutput,
} from '../shared/contract.js';
import { contractOutputsChecked, enforceOutput } from '../shared/contract-outputs.js';
import { ApiError } from '../shared/errors.js';
import { type CallAnswer, type CallFailure, callRequest, readAnswer } from '../shared/internal-wire.js';

/** A call the proxy makes to the control-plane; refusals arrive as the `ApiError` the control-plane threw. */
export type ControlPlaneClient = {
  call<Name extends ProcedureName>(name: Name, ...input: CallInput<Name>): Promise<ProcedureOutput<Name>>;
};
type CallInput<Name extends ProcedureName> = undefined extends ProcedureInput<Name> ? [] : [ProcedureInput<Name>];

/**
 * Keep-alive connections to the control-plane; the proxy calls it on cache misses and payments.
 *
 * Each call is a tRPC batch of one (shared/internal-wire.ts), sent with undici's `request`: the
 * control-plane sees what tRPC's own client would send, and the proxy skips the fetch-based
 * client's machinery, which cost it more than half a millisecond of CPU per call.
 *
 * With `checkOutputs` (by default: in tests, shared/contract-outputs.ts) every answer is checked
 * against its procedure's output schema; one that does not match throws a `ContractOutputError`,
 * raised again as an uncaught exception so that no caller's catch hides it.
 *
 * With `tracing`, each call carries the active span's W3C `traceparent`, so the control-plane's
 * spans join the paid call's trace.
 */
export function createControlPlaneClient(
  baseUrl: string,
  internalToken: string,
  { checkOutputs = contractOutputsChecked(), tracing }: { checkOutputs?: boolean; tracing?: Tracing | undefined } = {},
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
      const { path, method, body } = callRequest(`${prefix}${name}`, contract[name].kind, input);
      let res: Dispatcher.ResponseData;
      let text: string;
      try {
        res = await dispatcher.request({
          origin: origin.origin,
          path,
          method,
          headers: withTraceContext(
            tracing,
            body === undefined ? { authorization } : { authorization, 'content-type': 'application/json' },
          ),
          ...(body === undefined ? {} : { body }),
        });
        text = await res.body.text();
      } catch (err) {
        throw unreachable(err);
      }
      const answer = readAnswer(text);
      if (answer && 'result' in answer) {
        if (checkOutputs) enforceOutput(name, answer.result.data, 'proxy');
        return answer.result.data as never;
      }
      throw (
        (answer && refusalOf(answer.error)) ?? new Error(`control-plane call ${name} failed: ${res.statusCode} ${describe(answer, text)}`)
      );
    },
  };
  return { client, close: () => dispatcher.close() };
}

/**
 * The control-plane could not be reached, or broke off before answering (stopped, restarting,
 * past the call's time): the caller is told to come back shortly (503 with Retry-After), not
 * handed a 500. Whether the control-plane did the work is for its own recovery to settle: a paid
 * call's claim, a purchase's payment and a settlement are all recorded before they are acted on
 * (docs/decisions.md#D-274). The transport's error stays on it as `cause`, for the logs.
 */
function unreachable(err: unknown): ApiError {
  const refusal = new ApiError('service_unavailable', 'hub could not reach its control-plane; try again shortly.', {
    retryAfterSeconds: 1,
  });
  return Object.assign(refusal, { cause: err });
}

/**
 * The `ApiError` a failed call carries in the spec's envelope (trpc/init.ts puts it there); an
 * unexpected failure (a 500, no envelope) is none.
 */
function refusalOf(error: CallFailure): ApiError | undefined {
  const data = error.data;
  if (!data?.envelope || typeof data.envelope.error !== 'string' || !data.httpStatus || data.httpStatus === 500) return undefined;
  return ApiError.fromBody(data.httpStatus, data.envelope);
}

function describe(answer: CallAnswer | undefined, text: string): string {
  if (answer && 'error' in answer && typeof answer.error.message === 'string') return answer.error.message;
  return text.slice(0, 200);
}
