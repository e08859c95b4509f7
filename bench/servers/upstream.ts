// The benchmark's seller API: answers every request with the same 1 KB JSON body, at once, or
// after a millisecond under /slow/ (an API that does some work).
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
const body = Buffer.from(
  JSON.stringify({ items: Array.from({ length: 20 }, (_, i) => ({ id: i, name: `item-${i}`, price: '0.010000' })) }).padEnd(1024, ' '),
);

createServer((req, res) => {
  req.resume();
  const answer = () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  };
  if (req.url?.startsWith('/slow/')) setTimeout(answer, 1);
  else answer();
}).listen(port, '127.0.0.1');
