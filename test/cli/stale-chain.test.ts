import { existsSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { whyChainDoesNotAnswer } from '../../chain/answers.js';
import { readDeploymentFile } from '../../chain/deployment.js';
import { alive } from '../helpers/chain.js';
import { exitWithin, freePort, runHub, tempDataDir, waitForStatus } from '../helpers/processes.js';

t.setTimeout(300_000);

type LogLine = { msg: string; pid?: number; why?: string };
const logLines = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);

async function until(what: string, probe: () => boolean, timeoutMs: number): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    if (probe()) return;
  }
  throw new Error(`timed out waiting for ${what}`);
}

t.test('a chain description left behind by a killed chain is stale: hub start runs a fresh chain and says so', async (t) => {
  const { dataDir, databaseUrl } = tempDataDir(t);
  const chainFile = join(dataDir, 'chain.json');

  // A chain killed hard, anvil with it, as a second Ctrl-C or a machine restart leaves it.
  const chainUp = runHub(t, ['chain', 'up', '--accounts', '2'], { HUB_DATA_DIR: dataDir, HUB_LOG_LEVEL: 'info' });
  await until('chain.json', () => existsSync(chainFile) && logLines(chainUp.stdout()).some((l) => l.pid), 120_000);
  const anvilPid = logLines(chainUp.stdout()).find((l) => l.pid)!.pid!;
  const stale = await readDeploymentFile(chainFile);
  chainUp.child.kill('SIGKILL');
  process.kill(anvilPid, 'SIGKILL');
  await until('anvil to exit', () => !alive(anvilPid), 10_000);
  t.ok(existsSync(chainFile), 'its description stays behind');

  const cpPort = await freePort();
  const proxyPort = await freePort();
  const hub = runHub(t, ['start'], {
    HUB_DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    HUB_CONTROL_PLANE_PORT: String(cpPort),
    HUB_PROXY_PORT: String(proxyPort),
    HUB_ENV: 'development',
    HUB_DEV_CHAIN: 'auto',
    HUB_LOG_LEVEL: 'info',
  });
  t.ok(await waitForStatus(`http://127.0.0.1:${proxyPort}/readyz`, 200, 120_000), 'ready');
  const said = logLines(hub.stdout()).filter((l) => /stale/.test(l.msg));
  t.equal(said.length, 1, 'one line says so');
  t.match(said[0]?.msg, `the local chain in ${chainFile} is stale: ${stale.rpcUrl} does not answer`);
  t.match(said[0]?.msg, /; starting a fresh one$/);

  const fresh = await readDeploymentFile(chainFile);
  t.equal(await whyChainDoesNotAnswer(fresh), undefined, 'the chain described now answers');
  t.ok(
    logLines(hub.stdout()).some((l) => l.msg === 'taking payments'),
    'the control-plane takes payments on it',
  );
  t.same(await (await fetch(`http://127.0.0.1:${cpPort}/readyz`)).json(), { status: 'ready', payments: 'available' });

  hub.child.kill('SIGTERM');
  t.equal(await exitWithin(hub, 15_000), 0);
});
