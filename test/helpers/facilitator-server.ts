import type { IncomingMessage } from 'node:http';
import { serveOnLoopback } from './loopback-server.js';

/**
 * A facilitator-shaped HTTP server on loopback: `POST /verify`, `POST /settle`, `GET /supported`,
 * answered by whatever `handle` returns, so a test can put a real facilitator behind it or script
 * faults (status, raw body, delay, no answer at all).
 */

export type Route = 'verify' | 'settle' | 'supported';
export type Answer = { status: number; body: unknown; raw?: boolean; delayMs?: number } | 'hang';
export type Handler = (route: Route, body: unknown, headers: IncomingMessage['headers']) => Answer | Promise<Answer>;

type Tap = { teardown: (fn: () => unknown) => void };

export function startFacilitatorServer(t: Tap, handle: Handler): Promise<string> {
  return serveOnLoopback(t, async (req, res, text) => {
    const route = (req.url ?? '').replace(/^\//, '') as Route;
    const answer = await handle(route, text ? JSON.parse(text) : undefined, req.headers);
    if (answer === 'hang') return;
    if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
    if (res.destroyed) return;
    const body = answer.raw
      ? String(answer.body)
      : JSON.stringify(answer.body, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(body);
  });
}
