// The seller's API behind hub in bench:payments: built on hub's SDK, it asks for one `calls` of
// `search` the first time it sees a request id (hub prices and challenges it) and serves the paid
// retry with `hub-usage`.
//
//   node --import tsx bench/servers/paid-seller.ts <port> <kid> <secret>
import { createServer } from 'node:http';
import { paymentRequiredBody, sendJson, setUsageHeader, withHubSignature } from '../../sdk/index.js';

const [port, kid, secret] = process.argv.slice(2);
const challenged = new Set<string>();

const handler = withHubSignature(
  (_req, res, { identity }) => {
    if (!challenged.has(identity.requestId)) {
      challenged.add(identity.requestId);
      return sendJson(res, 402, paymentRequiredBody({ serviceSlug: 'search', usage: [{ meterSlug: 'calls', quantity: 1 }] }));
    }
    challenged.delete(identity.requestId);
    setUsageHeader(res, [{ serviceSlug: 'search', meterSlug: 'calls', quantity: 1 }]);
    sendJson(res, 200, { results: ['a', 'b'] });
  },
  { secrets: (id) => (id === kid ? secret : undefined) },
);
createServer((req, res) => {
  if (req.url === '/') return sendJson(res, 200, { ok: true });
  void handler(req, res);
}).listen(Number(port), '127.0.0.1');
