import { createServer, type IncomingHttpHeaders } from 'node:http';
import { closeServer } from '../../runtime/http-server.js';
import { sendJson } from '../../runtime/respond.js';
import { newId } from '../../shared/ids.js';
import { onLoopback } from './signed-request.js';

/**
 * A stand-in for hub's `/v1/usage/check` and `/v1/usage` on loopback, shaped as the spec describes
 * them (bearer API key, always-200 checks, idempotent reports). Tests steer its answers.
 */
export type Recorded = { method: string; path: string; headers: IncomingHttpHeaders; body: any };
export type FakeAnswer = { status: number; body: unknown } | { raw: string; status: number } | 'hang';

export async function startFakeUsageApi(apiKey: string) {
  const requests: Recorded[] = [];
  const seen = new Map<string, string>();
  const api = {
    requests,
    check: (_body: any): FakeAnswer => ({ status: 200, body: { allowed: false, reason: 'access_not_found' } }),
    report: (body: any): FakeAnswer => {
      const duplicate = seen.has(body.idempotencyKey);
      if (!duplicate) seen.set(body.idempotencyKey, newId('usageEvent'));
      return { status: 200, body: { id: seen.get(body.idempotencyKey), duplicate } };
    },
    url: '',
    close: async () => {},
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      if (req.headers.authorization !== `Bearer ${apiKey}`) return sendJson(res, 401, { error: 'invalid_token' });
      const answer =
        req.method === 'POST' && req.url === '/v1/usage/check'
          ? api.check(body)
          : req.method === 'POST' && req.url === '/v1/usage'
            ? api.report(body)
            : { status: 404, body: { error: 'not_found' } };
      if (answer === 'hang') return;
      if ('raw' in answer) {
        res.writeHead(answer.status, { 'content-type': 'text/html' });
        res.end(answer.raw);
        return;
      }
      sendJson(res, answer.status, answer.body);
    });
  });
  const port = await onLoopback(server);
  api.url = `http://127.0.0.1:${port}`;
  api.close = () => closeServer(server, 50);
  return api;
}
