// The proxy's client against a control-plane that answers outside the contract, run as a child
// process (what it shows ends the process): without the check the answer is handed on as it came;
// with it the call throws, and although the caller catches that, the process ends with the error
// (shared/contract-outputs.ts › enforceOutput). Prints what it saw on stdout.
import { createServer } from 'node:http';
import { createControlPlaneClient } from '../../proxy/control-plane-client.js';
import { listen } from '../../runtime/http-server.js';

const server = createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'application/json' });
  // An id that is a number: the contract's answer has strings.
  res.end(JSON.stringify([{ result: { data: { usageEventIds: [42] } } }]));
});
const url = `http://127.0.0.1:${await listen(server, 0, '127.0.0.1')}`;
const input = { requestId: 'hubreq_0', sellerId: 'sel_0', organizationId: 'org_0', usage: [] };

const unchecked = createControlPlaneClient(url, 'token', { checkOutputs: false });
process.stdout.write(`unchecked ${JSON.stringify(await unchecked.client.call('captureUsage', input))}\n`);

const checked = createControlPlaneClient(url, 'token', { checkOutputs: true });
try {
  await checked.client.call('captureUsage', input);
  process.stdout.write('answered\n');
} catch (err) {
  process.stdout.write(`caught ${(err as Error).name}\n`);
}
// The server keeps the process alive: only the error raised again can end it.
