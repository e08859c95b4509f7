import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { closeServer, listen } from '../../runtime/http-server.js';
import type { HubIdentity } from '../../sdk/identity.js';
import { withHubSignature } from '../../sdk/node.js';
import type { TestHub } from './hub.js';

type Tap = { teardown: (fn: () => unknown) => void };

export type SeenRequest = { method: string; url: string; headers: IncomingMessage['headers']; body: string; identity: HubIdentity };

export type TestUpstream = {
  url: string;
  server: Server;
  seen: SeenRequest[];
  /** Secrets the upstream accepts, by kid (mutable: tests rotate them). */
  secrets: Map<string, string>;
  /** Releases the rest of a held `/sse` stream. */
  release: () => void;
};

/**
 * A seller API for proxy tests, written on the SDK's verifier (so every request it serves carried
 * a valid hub signature; others get the SDK's 401). Routes:
 *   /echo…         JSON of what arrived       /sse        one event, then the rest after release()
 *   /usage/ok      2xx with a valid hub-usage  /usage/bad  2xx with a malformed hub-usage
 *   /usage/4xx     400 carrying hub-usage      /usage/unknown-meter
 *   /slow-headers  answers after 1 s          /stall-body  sends half a body, then nothing
 *   /status/<n>    answers n                   /big        200 KB of body
 *   /empty         200 without a body          /gzip       a gzip-compressed JSON answer
 *   /pay/cut       a 402 cut off mid-body      /pay/crowded  a 402 asking for 101 items
 */
export async function startTestUpstream(
  t: Tap,
  handlerHook?: (req: IncomingMessage, identity: HubIdentity) => Promise<void> | void,
): Promise<TestUpstream> {
  const secrets = new Map<string, string>();
  const seen: SeenRequest[] = [];
  let release: () => void = () => {};
  const held = new Promise<void>((r) => (release = r));

  const handler = withHubSignature(
    async (req: IncomingMessage, res: ServerResponse, { identity, body }) => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: body.toString('utf8'), identity });
      await handlerHook?.(req, identity);
      const path = (req.url ?? '').split('?')[0]!;
      const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(value));
      };
      if (path.startsWith('/echo'))
        return json(
          200,
          { method: req.method, url: req.url, headers: req.headers, body: body.toString('utf8') },
          { 'x-upstream': 'yes', connection: 'keep-alive, x-hop', 'x-hop': 'drop-me' },
        );
      if (path === '/usage/ok')
        return json(200, { ok: true }, { 'hub-usage': JSON.stringify([{ serviceSlug: 'search', meterSlug: 'calls', quantity: 3 }]) });
      if (path === '/usage/bad')
        return json(200, { ok: true }, { 'hub-usage': '[{"serviceSlug":"search","meterSlug":"calls","quantity":-1}]' });
      if (path === '/usage/4xx')
        return json(400, { error: 'nope' }, { 'hub-usage': JSON.stringify([{ serviceSlug: 'search', meterSlug: 'calls', quantity: 1 }]) });
      if (path === '/usage/unknown-meter')
        return json(200, { ok: true }, { 'hub-usage': JSON.stringify([{ serviceSlug: 'search', meterSlug: 'nope', quantity: 1 }]) });
      if (path === '/sse') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.write('data: first\n\n');
        await held;
        res.write('data: second\n\n');
        return res.end();
      }
      if (path === '/slow-headers') {
        await new Promise((r) => setTimeout(r, 1_000));
        return json(200, { late: true });
      }
      if (path === '/stall-body') {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100' });
        res.write('x'.repeat(50));
        return; // never finishes; the proxy's idle-body timeout must end it
      }
      if (path.startsWith('/forged/')) {
        // A seller (or anything between) posing as hub: billing, usage and payment headers of its own.
        res.writeHead(Number(path.slice('/forged/'.length)), [
          ['content-type', 'application/json'],
          ['hub-billing', '{"status":"settled","chargedUsd":"0.000000"}'],
          ['hub-usage-error', 'settlement_failed'],
          ['hub-usage-adjusted', '[]'],
          ['hub-request-id', 'hubreq_forged'],
          ['x-hub-anything', 'forged'],
          ['payment-response', 'eyJzdWNjZXNzIjp0cnVlfQ=='],
          ['x-payment-response', 'eyJzdWNjZXNzIjp0cnVlfQ=='],
          ['payment-receipt', 'eyJzdGF0dXMiOiJzdWNjZXNzIn0'],
          ['payment-required', 'eyJ4NDAyVmVyc2lvbiI6Mn0='],
          ['www-authenticate', 'Payment id="forged", realm="x", method="evm", intent="charge", request="e30"'],
          ['www-authenticate', 'Bearer realm="seller"'],
          ['x-seller', 'kept'],
        ]);
        return res.end('{"forged":true}');
      }
      if (path.startsWith('/status/'))
        return json(Number(path.slice('/status/'.length)), { status: Number(path.slice('/status/'.length)) });
      if (path === '/empty') return res.writeHead(200).end();
      if (path === '/pay/cut') {
        res.writeHead(402, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"error":"');
        return setTimeout(() => res.destroy(), 20);
      }
      if (path === '/pay/crowded')
        return json(402, {
          error: 'payment_required',
          serviceSlug: 'search',
          usage: Array.from({ length: 101 }, () => ({ meterSlug: 'calls', quantity: 1 })),
        });
      if (path === '/gzip') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        return res.end(gzipSync('{"compressed":true}'));
      }
      if (path === '/big') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return res.end(Buffer.alloc(200_000, 7));
      }
      return json(404, { error: 'no_such_route' });
    },
    { secrets: (kid) => secrets.get(kid) },
  );

  const server = createServer((req, res) => void handler(req, res));
  const port = await listen(server, 0, '127.0.0.1');
  t.teardown(() => {
    release();
    return closeServer(server, 200);
  });
  return { url: `http://127.0.0.1:${port}`, server, seen, secrets, release: () => release() };
}

/** A seller on the hub whose API is this upstream, with its signing secret handed to the upstream. */
export async function sellerBehind(hub: Pick<TestHub, 'seller'>, upstream: TestUpstream, slug = 'acme') {
  const seller = await hub.seller({ slug, upstreamBaseUrl: upstream.url });
  upstream.secrets.set(seller.kid, seller.secret);
  return seller;
}
