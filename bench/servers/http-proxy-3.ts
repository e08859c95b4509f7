// http-proxy-3 doing the header work hub does on a GET: strip inbound hub-* fields, then set a
// request id, the identity pair and an HMAC signature over the canonical string.
import { createServer } from 'node:http';
import { createHmac, createHash, randomBytes } from 'node:crypto';
import { createProxyServer } from 'http-proxy-3';

const [port, upstreamPort] = process.argv.slice(2).map(Number);
const secret = randomBytes(32).toString('hex');
const emptyBodyHash = createHash('sha256').update('').digest('hex');
const proxy = createProxyServer({ target: `http://127.0.0.1:${upstreamPort}`, changeOrigin: true, agent: new (await import('node:http')).Agent({ keepAlive: true, maxSockets: 256 }) });

createServer((req, res) => {
  for (const name of Object.keys(req.headers)) if (name.startsWith('hub-') || name.startsWith('x-hub-')) delete req.headers[name];
  const requestId = `hubreq_${randomBytes(18).toString('base64url')}`;
  const t = Math.floor(Date.now() / 1000);
  const canonical = `${t}\n${req.method}\n${req.url}\n${emptyBodyHash}\n${requestId}\n`;
  req.headers['hub-request-id'] = requestId;
  req.headers['hub-signature'] = `t=${t},kid=hsec_benchmark,v1=${createHmac('sha256', secret).update(canonical).digest('hex')}`;
  req.headers['x-forwarded-for'] = req.socket.remoteAddress ?? '';
  proxy.web(req, res, {}, () => {
    res.statusCode = 502;
    res.end();
  });
}).listen(port, '127.0.0.1');
