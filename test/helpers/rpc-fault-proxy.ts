import { serveOnLoopback } from './loopback-server.js';

/**
 * A JSON-RPC pass-through on loopback that can lose answers on purpose, to test what settlement
 * does when it cannot know whether a call took effect. Per method:
 * - `swallow`: forward the call (it takes effect on chain) but never answer;
 * - `drop`: neither forward nor answer (the call never reaches the chain);
 * - `unknown`: answer "method not found" (-32601) without forwarding, as a node without it does;
 * - `no-receipt`: for eth_sendRawTransactionSync, hand the transaction to the node the plain way
 *   and answer EIP-7966's timeout (code 4, the hash as data), as a node that took it but has not
 *   mined it within its wait.
 * `calls` counts the calls that reached the proxy, by method.
 */
export type Fault = 'swallow' | 'drop' | 'unknown' | 'no-receipt';

export type RpcFaultProxy = { url: string; faults: Map<string, Fault>; calls: Map<string, number> };

type Tap = { teardown: (fn: () => unknown) => void };
type Call = { id: number; method: string; params?: unknown[] };

export async function startRpcFaultProxy(t: Tap, upstream: string): Promise<RpcFaultProxy> {
  const faults = new Map<string, Fault>();
  const calls = new Map<string, number>();
  const forward = async (body: unknown) =>
    (await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();

  /** The answer to one call: the node's, or the one its fault makes up. */
  const answer = async (call: Call): Promise<unknown> => {
    const fault = faults.get(call.method);
    if (fault === 'unknown') return { jsonrpc: '2.0', id: call.id, error: { code: -32601, message: 'Method not found' } };
    if (fault === 'no-receipt') {
      const sent = (await forward({ ...call, method: 'eth_sendRawTransaction', params: call.params?.slice(0, 1) })) as { result?: string };
      return { jsonrpc: '2.0', id: call.id, error: { code: 4, message: 'not processed in time', data: sent.result } };
    }
    return forward(call);
  };

  const url = await serveOnLoopback(t, async (_req, res, body) => {
    const parsed = JSON.parse(body) as Call | Call[];
    const batch = [parsed].flat();
    for (const call of batch) calls.set(call.method, (calls.get(call.method) ?? 0) + 1);
    const fault = batch.map((c) => faults.get(c.method)).find((f) => f === 'swallow' || f === 'drop');
    if (fault === 'drop') return;
    const answers = await Promise.all(batch.map(answer));
    if (fault === 'swallow') return;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(Array.isArray(parsed) ? answers : answers[0]));
  });
  return { url, faults, calls };
}
