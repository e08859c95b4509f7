import { join } from 'node:path';
import t from 'tap';
import { whyChainDoesNotAnswer } from '../../chain/answers.js';
import { readDeploymentFile, writeDeploymentFile } from '../../chain/deployment.js';
import { devAccounts } from '../../chain/dev-accounts.js';
import { seedCompiledContracts } from '../helpers/chain.js';
import { exitWithin, freePort, runHub, tempDataDir, waitForStatus } from '../helpers/processes.js';

t.setTimeout(300_000);

type LogLine = { msg: string; pid?: number; why?: string };
const logLines = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);

t.test('a chain description left behind by a killed chain is stale: hub start runs a fresh chain and says so', async (t) => {
  const { dataDir, databaseUrl } = tempDataDir(t);
  const chainFile = join(dataDir, 'chain.json');

  // What a chain killed hard (a second Ctrl-C, a machine restart) leaves behind: its description,
  // naming a port nothing answers on any more. Written here rather than by running and killing
  // one, which cost a chain's start and deployment for nothing the check looks at.
  const [deployer, settler] = devAccounts(2);
  await writeDeploymentFile(chainFile, {
    chainId: 31337,
    network: 'eip155:31337',
    rpcUrl: `http://127.0.0.1:${await freePort()}`,
    token: { address: '0x5FbDB2315678afecb367f032d93F642f64180aa3', name: 'Hub USD', symbol: 'hUSD', version: '1', decimals: 6 },
    deployer: deployer!,
    settler: settler!,
    accounts: [deployer!, settler!].map((a) => ({ ...a, tokenUnits: 1_000_000n })),
  });
  const stale = await readDeploymentFile(chainFile);
  await seedCompiledContracts(dataDir);

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
