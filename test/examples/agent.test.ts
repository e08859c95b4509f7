import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { closeServer, listen } from '../../runtime/http-server.js';
import { tempDataDir } from '../helpers/processes.js';

// The demo agent (examples/agent/pay.ts) as the README runs it: its failures are one line, and
// it says "paid" only when hub says money moved.

const script = fileURLToPath(new URL('../../examples/agent/pay.ts', import.meta.url));
const WALLET = `0x${'11'.repeat(32)}`;

function runAgent(url: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', script, url],
      { env: { ...process.env, ...env }, timeout: 30_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

t.test('before the chain is up: one line saying to start it, no stack trace', async (t) => {
  const { dataDir } = tempDataDir(t);
  const run = await runAgent('http://weather.pay.localhost:8402/metered', { HUB_DATA_DIR: dataDir, AGENT_PRIVATE_KEY: '' });
  t.equal(run.code, 2);
  t.match(
    run.stderr,
    /^no wallet: set AGENT_PRIVATE_KEY, or start hub first \(in development npm start runs a local chain and writes .*chain\.json\)\n$/,
  );
});

t.test('a 503 is reported as nothing paid', async (t) => {
  const server = createServer((_req, res) =>
    res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"service_unavailable"}'),
  );
  const port = await listen(server, 0, '127.0.0.1');
  t.teardown(() => closeServer(server, 100));
  const run = await runAgent(`http://127.0.0.1:${port}/metered`, { AGENT_PRIVATE_KEY: WALLET });
  t.equal(run.code, 0);
  t.match(run.stdout, /^503 Service Unavailable {2}\(nothing paid; wallet 0x[0-9a-fA-F]{40}\)\n/);
  t.notMatch(run.stdout, /paid from/);
});

t.test('an unreachable pay URL is one line', async (t) => {
  const run = await runAgent('http://127.0.0.1:1/metered', { AGENT_PRIVATE_KEY: WALLET });
  t.equal(run.code, 1);
  t.match(run.stderr, /^could not call http:\/\/127\.0\.0\.1:1\/metered: fetch failed\n$/);
});
