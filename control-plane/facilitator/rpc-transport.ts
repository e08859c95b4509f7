import { Pool } from 'undici';
import { custom, HttpRequestError, RpcRequestError, TimeoutError } from 'viem';

type RpcCall = { method: string; params?: unknown };
type Body = { jsonrpc: '2.0'; id: number; method: string; params: unknown };
type Waiting = { body: Body; resolve(result: unknown): void; reject(err: Error): void };
type RpcAnswer = { id: number; result?: unknown; error?: { code: number; message: string; data?: unknown } };

/** Calls per request, as viem's own batching caps them. */
const MAX_BATCH = 1_000;

/**
 * The settler's JSON-RPC transport: viem's clients on undici's `request` over kept-alive
 * connections, instead of viem's `http` transport, whose WHATWG fetch (request objects, web
 * streams, abort signals) cost the control-plane more CPU than the node took to answer. Calls
 * made in the same turn of the event loop go out as one batch, and `timeoutMs` bounds a call from
 * the moment it is made. Failures are viem's own errors, as `http` raises them: an answer with a
 * JSON-RPC error is an `RpcRequestError` (the node answered, chain-errors.ts › nodeAnswered),
 * anything else (no answer, a failed connection, an answer that is not JSON-RPC) an
 * `HttpRequestError` or a `TimeoutError`, which the settler treats as an outcome not known. No
 * retries: a broadcast sent again that the node already holds comes back as an error.
 */
export function rpcTransport(url: string, { timeoutMs }: { timeoutMs: number }) {
  const target = new URL(url);
  const path = `${target.pathname}${target.search}`;
  const pool = new Pool(target.origin, { connections: 16, keepAliveTimeout: 30_000, connect: { timeout: timeoutMs } });
  let nextId = 0;
  let waiting: Waiting[] = [];

  const send = async (batch: Waiting[]) => {
    const body = batch.length === 1 ? batch[0]!.body : batch.map((w) => w.body);
    try {
      const response = await pool.request({
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await response.body.text();
      if (response.statusCode < 200 || response.statusCode > 299) {
        throw new HttpRequestError({ url, body, status: response.statusCode, details: text.slice(0, 200) });
      }
      const answers = answersOf(text);
      for (const w of batch) {
        const answer = answers.get(w.body.id);
        if (!answer) w.reject(new HttpRequestError({ url, body: w.body, details: 'The node sent no answer for this call.' }));
        else if (answer.error) w.reject(new RpcRequestError({ url, body: w.body, error: answer.error }));
        else w.resolve(answer.result);
      }
    } catch (err) {
      const failure = transportFailure(err, url, body);
      for (const w of batch) w.reject(failure);
    }
  };

  const request = ({ method, params }: RpcCall) =>
    new Promise<unknown>((resolve, reject) => {
      waiting.push({ body: { jsonrpc: '2.0', id: nextId++, method, params: params ?? [] }, resolve, reject });
      if (waiting.length > 1) return;
      setImmediate(() => {
        const all = waiting;
        waiting = [];
        for (let i = 0; i < all.length; i += MAX_BATCH) void send(all.slice(i, i + MAX_BATCH));
      });
    });

  return {
    transport: custom({ request }, { key: 'rpc', name: 'JSON-RPC over undici', retryCount: 0 }),
    /** Closes the kept-alive connections. */
    close: () => pool.close(),
  };
}

/** The answers of a JSON-RPC response by id; a body that is not one throws (the node did not answer). */
function answersOf(text: string): Map<number, RpcAnswer> {
  const parsed: unknown = JSON.parse(text);
  const answers = new Map<number, RpcAnswer>();
  for (const answer of Array.isArray(parsed) ? parsed : [parsed]) {
    if (typeof answer !== 'object' || answer === null || typeof (answer as RpcAnswer).id !== 'number') {
      throw new Error('The node answered something that is not a JSON-RPC response.');
    }
    const { error } = answer as RpcAnswer;
    if (error !== undefined && (typeof error !== 'object' || error === null || typeof error.code !== 'number')) {
      throw new Error('The node answered an error that is not a JSON-RPC error.');
    }
    answers.set((answer as RpcAnswer).id, answer as RpcAnswer);
  }
  return answers;
}

function transportFailure(err: unknown, url: string, body: unknown): Error {
  if (err instanceof HttpRequestError) return err;
  const cause = err instanceof Error ? err : new Error(String(err));
  if (cause.name === 'TimeoutError' || cause.name === 'AbortError' || (cause as { code?: string }).code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new TimeoutError({ url, body: body as Record<string, unknown> });
  }
  return new HttpRequestError({ url, body: body as Record<string, unknown>, details: cause.message, cause });
}
