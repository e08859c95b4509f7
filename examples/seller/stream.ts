import type { ServerResponse } from 'node:http';
import type { HubIdentity } from '../../sdk/index.js';

/** Bounds that keep a test (or a curious agent) from holding a connection open for long. */
const MAX_EVENTS = 50;
const MAX_DELAY_MS = 5_000;

/**
 * Server-sent events, written one at a time with a pause between them: what a proxy must pass
 * through as it arrives, not after the upstream finishes. `?events=3&delayMs=100`.
 */
export async function streamEvents(res: ServerResponse, query: URLSearchParams, identity: HubIdentity): Promise<void> {
  const events = clamp(query.get('events'), 3, 1, MAX_EVENTS);
  const delayMs = clamp(query.get('delayMs'), 100, 0, MAX_DELAY_MS);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.flushHeaders();
  let closed = false;
  res.on('close', () => (closed = true));
  for (let i = 1; i <= events && !closed; i++) {
    res.write(
      `id: ${i}\nevent: tick\ndata: ${JSON.stringify({ n: i, of: events, requestId: identity.requestId, at: new Date().toISOString() })}\n\n`,
    );
    if (i < events) await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  if (!closed) res.end('event: done\ndata: {}\n\n');
}

function clamp(raw: string | null, fallback: number, min: number, max: number): number {
  const n = raw === null ? fallback : Number(raw);
  return Number.isInteger(n) ? Math.min(max, Math.max(min, n)) : fallback;
}
