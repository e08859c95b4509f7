import { serveOnLoopback } from './loopback-server.js';

/**
 * A JSON-RPC pass-through on loopback that can lose answers on purpose, to test what settlement
 * does when it cannot know whether a call took effect. Per method:
 * - `swallow`: forward the call (it takes effect on chain) but never answer;
 * - `drop`: neither forward nor answer (the call never reaches the chain).
 */
export type Fault = 'swallow' | 'drop';

export type RpcFaultProxy = { url: string; faults: Map<string, Fault> };

type Tap = { teardown: (fn: () => unknown) => void };

export async function startRpcFaultProxy(t: Tap, upstream: string): Promise<RpcFaultProxy> {
  const faults = new Map<string, Fault>();
  const url = await serveOnLoopback(t, async (_req, res, body) => {
    const calls = [JSON.parse(body)].flat() as { method: string }[];
    const fault = calls.map((c) => faults.get(c.method)).find(Boolean);
    if (fault === 'drop') return;
    const answer = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const text = await answer.text();
    if (fault === 'swallow') return;
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
  });
  return { url, faults };
}
