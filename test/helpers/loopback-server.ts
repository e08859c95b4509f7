import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

type Tap = { teardown: (fn: () => unknown) => void };

/**
 * A node:http server on 127.0.0.1 for one test, handed each request with its body read. Closed at
 * teardown, hanging connections included, so a test that leaves a request unanswered still ends.
 */
export async function serveOnLoopback(
  t: Tap,
  handle: (req: IncomingMessage, res: ServerResponse, body: string) => unknown,
): Promise<string> {
  const server = createServer(async (req, res) => handle(req, res, await readBody(req)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    req.on('data', (chunk: Buffer) => (data += chunk.toString('utf8')));
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}
