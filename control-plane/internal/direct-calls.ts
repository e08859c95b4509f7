import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Span } from '@opentelemetry/api';
import { callTRPCProcedure, getTRPCErrorFromUnknown, getTRPCErrorShape, TRPCError } from '@trpc/server';
import { mediaTypeOf } from '../../runtime/media-type.js';
import { readUpTo } from '../../runtime/read-body.js';
import { failSpan, inServerSpan, type Tracing } from '../../runtime/tracing.js';
import { HOT_PATH_PROCEDURES } from '../../shared/contract.js';
import { answerBody, BATCH_OF_ONE, type CallAnswer, type CallFailure, readBatchInputs } from '../../shared/internal-wire.js';
import type { ControlPlaneServices, RequestContext } from '../context.js';
import { callAttributes } from './call-span.js';
import { presentsInternalToken } from './internal-token.js';
import { internalApiRouter } from './router.js';

/**
 * The proxy's calls on every paid request (the challenge, the claim, the settlement) and on every
 * identified one that reports usage, answered straight from node:http. The answer is tRPC's own,
 * byte for byte: the procedure runs through `callTRPCProcedure` with its middlewares (the internal
 * token, input validation, hub's errors) and its result or error is written as a batch of one,
 * shaped by the router's error formatter. What is skipped is the generic adapter around it (a web
 * Request made of the node request, a web Response written back), which costs several times what
 * the procedure's own bookkeeping does.
 *
 * Only what the proxy sends takes this way (shared/internal-wire.ts): a POST batch of one of the
 * procedures the contract marks `onHotPath` (shared/contract.ts), JSON, with the internal token.
 * Anything else that reaches /trpc (with that token: trpc-endpoint.ts) is tRPC's to answer.
 *
 * Traced, each call is a span named as its procedure, in the trace of the proxy's `traceparent`.
 */
const DIRECT = new Set(HOT_PATH_PROCEDURES.map((name) => `internal.${name}`));

type Services = ControlPlaneServices;
type OnError = (failure: { error: TRPCError; path: string }) => void;

export type DirectCalls = {
  serves(req: IncomingMessage, procedure: string, search: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse, procedure: string): Promise<void>;
};

export function createDirectCalls(services: Services, onError: OnError, tracing?: Tracing): DirectCalls {
  return {
    serves: (req, procedure, search) =>
      req.method === 'POST' &&
      search === BATCH_OF_ONE &&
      DIRECT.has(procedure) &&
      mediaTypeOf(req.headers['content-type']) === 'application/json' &&
      presentsInternalToken(req, services.internalToken),

    handle: (req, res, procedure) => inServerSpan(tracing, procedure, req.headers, (span) => serveCall(req, res, procedure, span)),
  };

  async function serveCall(req: IncomingMessage, res: ServerResponse, procedure: string, span: Span | undefined): Promise<void> {
    const ctx: RequestContext = { ...services, req, res };
    let inputs: Promise<Record<string, unknown>> | undefined;
    // Read when the procedure asks for its input (after the token is checked), as tRPC does.
    const readInputs = () => {
      inputs ??= batchInputs(req);
      return inputs;
    };
    let answer: CallAnswer;
    let status = 200;
    try {
      const data = await callTRPCProcedure({
        router: internalApiRouter,
        path: procedure,
        getRawInput: async () => (await readInputs())[0],
        ctx,
        type: 'mutation',
        signal: undefined,
        batchIndex: 0,
      });
      answer = { result: { data } };
      if (span) span.setAttributes(callAttributes(procedure, (await readInputs())[0], data));
    } catch (cause) {
      const error = getTRPCErrorFromUnknown(cause);
      onError({ error, path: procedure });
      if (span) failSpan(span, error);
      const input = inputs ? await inputs.then((read) => read[0]).catch(() => undefined) : undefined;
      const shape = getTRPCErrorShape({ config: internalApiRouter._def._config, ctx, error, input, path: procedure, type: 'mutation' });
      status = shape.data.httpStatus;
      answer = { error: shape as CallFailure };
    }
    const body = answerBody(answer);
    res.writeHead(status, {
      vary: 'trpc-accept, accept',
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  }
}

/** The batch's inputs by index, as tRPC reads a JSON body. */
async function batchInputs(req: IncomingMessage): Promise<Record<string, unknown>> {
  // Unbounded, as tRPC's own adapter reads it: only the proxy, holding the internal token, gets here.
  const { bytes } = await readUpTo(req, Number.POSITIVE_INFINITY);
  const inputs = readBatchInputs(bytes.toString('utf8'));
  if (!inputs) throw new TRPCError({ code: 'BAD_REQUEST', message: '"input" needs to be an object when doing a batch call' });
  return inputs;
}
