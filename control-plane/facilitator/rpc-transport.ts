import { errors, Pool } from 'undici';
import { custom, HttpRequestError, RpcRequestError, TimeoutError } from 'viem';

type RpcCall = { method: string; params?: unknown };
type Waiting = {
  body: { jsonrpc: '2.0'; id: number; method: string; params: unknown };
  resolve(result: unknown): void;
  reject(err: Error): void;
};
type RpcAnswer = { id?: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown } };

/**
 * The settler's JSON-RPC transport: viem's clients on undici's `request` over kept-alive
 * connections, instead of viem's `http` transport, whose WHATWG fetch (request objects, web
 * streams, abort signals) cost the control-plane more CPU than the node took to answer. Calls
 * made in the same turn of the event loop go out as one batch. Failures are viem's own errors, as
 * `http` raises them: an answer with a JSON-RPC error is an `RpcRequestError` (the node answered,
 * chain-errors.ts › nodeAnswered), anything else an `HttpRequestError` or a `TimeoutError`. No
 * retries: a broadcast sent again that the node already holds comes back as an error.
 */
export function rpcTransport(url: string, { timeoutMs }: { timeoutMs: number }) {
  const target = new URL(url);
  const path = `${target.pathname}${target.search}`;
  const pool = new Pool(target.origin, { connections: 16, keepAliveTimeout: 30_000, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  let nextId = 0;
  let waiting: Waiting[] = [];

  const send = async (batch: Waiting[]) => {
    const body = batch.length === 1 ? batch[0]!.body : batch.map((w) => w.body);
    let answers: RpcAnswer[];
    try {
      const response = await pool.request({
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await response.body.text();
      if (response.statusCode < 200 || response.statusCode > 299) {
        throw new HttpRequestError({ url, body, status: response.statusCode, details: text.slice(0, 200) });
      }
      const parsed = JSON.parse(text) as RpcAnswer | RpcAnswer[];
      answers = Array.isArray(parsed) ? parsed : [parsed];
    } catch (err) {
      const failure = transportFailure(err, url, body);
      for (const w of batch) w.reject(failure);
      return;
    }
    const byId = new Map(answers.map((answer) => [answer.id, answer]));
    for (const w of batch) {
      const answer = byId.get(w.body.id);
      if (!answer) w.reject(new HttpRequestError({ url, body: w.body, details: 'The node sent no answer for this call.' }));
      else if (answer.error) w.reject(new RpcRequestError({ url, body: w.body, error: answer.error }));
      else w.resolve(answer.result);
    }
  };

  const request = ({ method, params }: RpcCall) =>
    new Promise<unknown>((resolve, reject) => {
      waiting.push({ body: { jsonrpc: '2.0', id: nextId++, method, params: params ?? [] }, resolve, reject });
      if (waiting.length > 1) return;
      setImmediate(() => {
        const batch = waiting;
        waiting = [];
        void send(batch);
      });
    });

  return custom({ request }, { key: 'rpc', name: 'JSON-RPC over undici', retryCount: 0 });
}

function transportFailure(err: unknown, url: string, body: unknown): Error {
  if (err instanceof HttpRequestError) return err;
  if (err instanceof errors.HeadersTimeoutError || err instanceof errors.BodyTimeoutError || err instanceof errors.ConnectTimeoutError) {
    return new TimeoutError({ url, body: body as Record<string, unknown> });
  }
  const cause = err instanceof Error ? err : new Error(String(err));
  return new HttpRequestError({ url, body: body as Record<string, unknown>, details: cause.message, cause });
}
