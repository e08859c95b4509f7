// http-proxy-3 doing the header work hub does on a GET: strip inbound hub-* fields, then set a
// request id, the identity pair and an HMAC signature over the canonical string.
import { createServer } from 'node:http';
import { createProxyServer } from 'http-proxy-3';
import { referenceIdentity } from './reference-identity.js';

const [port, upstreamPort] = process.argv.slice(2).map(Number);
const proxy = createProxyServer({
  target: `http://127.0.0.1:${upstreamPort}`,
  changeOrigin: true,
  agent: new (await import('node:http')).Agent({ keepAlive: true, maxSockets: 256 }),
});

createServer((req, res) => {
  for (const name of Object.keys(req.headers)) if (name.startsWith('hub-') || name.startsWith('x-hub-')) delete req.headers[name];
  Object.assign(req.headers, referenceIdentity(req.method, req.url));
  req.headers['x-forwarded-for'] = req.socket.remoteAddress ?? '';
  proxy.web(req, res, {}, () => {
    res.statusCode = 502;
    res.end();
  });
}).listen(port, '127.0.0.1');
