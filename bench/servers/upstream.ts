// The benchmark's seller API: answers every request with the same 1 KB JSON body.
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
const body = Buffer.from(
  JSON.stringify({ items: Array.from({ length: 20 }, (_, i) => ({ id: i, name: `item-${i}`, price: '0.010000' })) }).padEnd(1024, ' '),
);

createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
}).listen(port, '127.0.0.1');
