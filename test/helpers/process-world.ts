import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Hex } from 'viem';
import { writeDeploymentFile } from '../../chain/deployment.js';
import type { LocalChain } from '../../chain/local-chain.js';
import type { Provider } from '../../control-plane/db/client.js';
import { closeServer, listen } from '../../runtime/http-server.js';
import { withHubSignature } from '../../sdk/node.js';
import { paymentRequiredBody } from '../../sdk/payment-required.js';
import { createTestDatabase } from './database.js';
import { managementClient } from './management.js';
import { useLoopbackResolver } from './paid-world.js';
import { freePort, hubBin, type RunningHub, runHub, tempDataDir, waitForStatus } from './processes.js';

type Tap = Parameters<typeof tempDataDir>[0] & { ok: (value: unknown, message: string) => void };

const run = promisify(execFile);

/**
 * A paying world of real processes, for tests that kill them: `hub start control-plane` and
 * `hub start proxy` on one fresh database of `provider`, settling on `chain`, and a seller `acme`
 * selling `search` / `calls` at $0.01 a call (payg), its catalog made through the API. The seller
 * asks for payment the first time it sees a request id and serves its retry; `/hold` is answered
 * only when the test releases it (a paid call kept in flight at the seller). The pending loop
 * passes every 200 ms, so what a crash left is finished within the test.
 */
export async function startProcessWorld(t: Tap, provider: Provider, chain: LocalChain) {
  const { db, database } = await createTestDatabase(t, provider);
  const { dataDir } = tempDataDir(t);
  const chainFile = join(dataDir, 'chain.json');
  await writeDeploymentFile(chainFile, chain);
  const [cpPort, proxyPort] = [await freePort(), await freePort()];
  const env = {
    DATABASE_URL: database.url,
    HUB_DATA_DIR: dataDir,
    HUB_CHAIN_FILE: chainFile,
    HUB_DEV_CHAIN: 'off',
    HUB_MASTER_KEY: randomBytes(32).toString('hex'),
    HUB_INTERNAL_TOKEN: randomBytes(24).toString('base64url'),
    HUB_CONTROL_PLANE_PORT: String(cpPort),
    HUB_PROXY_PORT: String(proxyPort),
    HUB_PENDING_INTERVAL_MS: '200',
  };
  const cpUrl = `http://127.0.0.1:${cpPort}`;
  const start = async (role: 'control-plane' | 'proxy', port: number) => {
    const started = runHub(t, ['start', role], env);
    t.ok(await waitForStatus(`http://127.0.0.1:${port}/readyz`, 200), `the ${role} is ready`);
    return started;
  };
  /** Kills `running` with SIGKILL, waits for it to be gone, runs `whileDown`, and starts it again. */
  const restart = async (running: RunningHub, role: 'control-plane' | 'proxy', port: number, whileDown?: () => Promise<unknown>) => {
    running.child.kill('SIGKILL');
    await running.exited;
    await whileDown?.();
    return start(role, port);
  };
  let controlPlane = await start('control-plane', cpPort);
  let proxy = await start('proxy', proxyPort);
  useLoopbackResolver(t);

  const boot = JSON.parse(
    (
      await run(process.execPath, [hubBin, 'bootstrap', '--email', 'owner@example.com', '--org', 'Crashes', '--json'], {
        env: { ...process.env, ...env },
      })
    ).stdout,
  ) as { apiKey: string };
  const api = managementClient(cpUrl);
  const created = async (path: string, body: unknown = {}) => {
    const reply = await api.post(path, boot.apiKey, body);
    if (reply.status !== 201) throw new Error(`${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.body;
  };

  const secrets = new Map<string, string>();
  const challenged = new Set<string>();
  const served: string[] = [];
  // Armed again each time it is released: every `/hold` request waits for the next release.
  const arm = () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    return { held, release };
  };
  let hold = arm();
  const seller = withHubSignature(
    async (req: IncomingMessage, res: ServerResponse, { identity }) => {
      if (!challenged.has(identity.requestId)) {
        challenged.add(identity.requestId);
        res.writeHead(402, { 'content-type': 'application/json' });
        return res.end(JSON.stringify(paymentRequiredBody({ serviceSlug: 'search', usage: [{ meterSlug: 'calls', quantity: 1 }] })));
      }
      served.push(identity.requestId);
      if (new URL(req.url ?? '/', 'http://seller').pathname === '/hold') await hold.held;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ results: ['a', 'b'], requestId: identity.requestId }));
    },
    { secrets: (kid) => secrets.get(kid) },
  );
  const upstream = createServer((req, res) => void seller(req, res));
  const upstreamPort = await listen(upstream, 0, '127.0.0.1');
  t.teardown(() => closeServer(upstream, 200));

  const payTo = chain.accounts[2]!.address;
  const payer = chain.accounts[3]!;
  const { seller: acme } = await created('/v1/sellers', {
    name: 'Acme',
    slug: 'acme',
    upstreamBaseUrl: `http://127.0.0.1:${upstreamPort}`,
    payToAddress: payTo,
    networks: [chain.network],
  });
  const { signingSecret, secret } = await created(`/v1/sellers/${acme.id}/signing-secrets`);
  secrets.set(signingSecret.id, secret);
  const { service } = await created('/v1/services', { sellerId: acme.id, name: 'Search', slug: 'search' });
  const { meter } = await created('/v1/meters', { serviceId: service.id, key: 'calls', unit: 'call' });
  const { plan } = await created('/v1/plans', { serviceId: service.id, name: 'Per call', slug: 'payg', billingMode: 'payg' });
  await created('/v1/plan-meter-prices', { planId: plan.id, meterId: meter.id, priceUsd: '0.01' });

  return {
    /** The database both processes use, for the test to read what they recorded (never to write). */
    db,
    api,
    apiKey: boot.apiKey,
    payTo,
    payer: payer.address,
    payerKey: payer.privateKey as Hex,
    served,
    payUrl: (path: string) => `http://acme.pay.localhost:${proxyPort}${path}`,
    /** Lets the seller answer the requests it holds at `/hold`. */
    releaseHold: () => {
      const released = hold;
      hold = arm();
      released.release();
    },
    restartControlPlane: async (whileDown?: () => Promise<unknown>) => {
      controlPlane = await restart(controlPlane, 'control-plane', cpPort, whileDown);
    },
    restartProxy: async (whileDown?: () => Promise<unknown>) => {
      proxy = await restart(proxy, 'proxy', proxyPort, whileDown);
    },
  };
}
