// The floor of a Node proxy: node:http in, one undici Pool out, the same header work as hub's
// anonymous GET (strip inbound hub-* fields, request id, forwarding fields, HMAC signature) and
// nothing else. hub's distance from this row is what hub itself adds. With a third argument
// above 1 it runs that many workers sharing the port through node:cluster, as hub's proxy does.
import cluster from 'node:cluster';
import { createServer } from 'node:http';
import { Pool } from 'undici';
import { referenceIdentity } from './reference-identity.js';

const [port, upstreamPort, workers = 1] = process.argv.slice(2).map(Number);

if (workers > 1 && cluster.isPrimary) {
  for (let i = 0; i < workers; i++) cluster.fork();
} else {
  serve();
}

function serve() {
  const origin = `http://127.0.0.1:${upstreamPort}`;
  const pool = new Pool(origin, { connections: 256 });
  createServer((req, res) => {
    const headers: Record<string, string | string[]> = {};
    for (const name in req.headers) {
      if (name === 'host' || name === 'connection' || name.startsWith('hub-') || name.startsWith('x-hub-')) continue;
      headers[name] = req.headers[name]!;
    }
    headers['x-forwarded-for'] = req.socket.remoteAddress ?? '';
    Object.assign(headers, referenceIdentity(req.method, req.url));
    pool.request({ method: 'GET', path: req.url ?? '/', headers }).then(
      (upstream) => {
        const out: Record<string, string | string[]> = {};
        for (const name in upstream.headers)
          if (name !== 'connection' && name !== 'keep-alive' && name !== 'transfer-encoding') out[name] = upstream.headers[name]!;
        res.writeHead(upstream.statusCode, out);
        upstream.body.on('data', (chunk: Buffer) => res.write(chunk));
        upstream.body.on('end', () => res.end());
      },
      () => {
        res.statusCode = 502;
        res.end();
      },
    );
  }).listen(port, '127.0.0.1');
}
