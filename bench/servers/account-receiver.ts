// The benchmark's stateful seller: the SDK's account endpoint over a memory store, taking account
// writes signed with BENCH_SIGNING_SECRET (kid BENCH_SIGNING_KID) on 127.0.0.1:<port>.
// `GET /taken` answers how many writes it has answered 200 so far: the benchmark follows a drain
// by it rather than by counting rows in the database it measures.
import { createServer } from 'node:http';
import { createAccountEndpoint } from '../../sdk/account/endpoint.js';
import { MemoryAccountStore } from '../../sdk/account/memory-store.js';

const port = Number(process.argv[2]);
const kid = process.env.BENCH_SIGNING_KID!;
const secret = process.env.BENCH_SIGNING_SECRET!;
const endpoint = createAccountEndpoint({
  secrets: { [kid]: secret },
  store: new MemoryAccountStore(),
  mintKey: () => ({ apiKey: 'sk_bench' }),
});

let taken = 0;

createServer(async (req, res) => {
  if (req.url === '/taken') return void res.writeHead(200, { 'content-type': 'text/plain' }).end(String(taken));
  res.once('finish', () => {
    if (res.statusCode === 200) taken++;
  });
  if (await endpoint.handle(req, res)) return;
  res.writeHead(req.url === '/healthz' ? 200 : 404).end();
}).listen(port, '127.0.0.1');
