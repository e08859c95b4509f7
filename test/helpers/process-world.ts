import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Hex } from 'viem';
import { writeDeploymentFile } from '../../chain/deployment.js';
import type { LocalChain } from '../../chain/local-chain.js';
import type { Provider } from '../../control-plane/db/client.js';
import { createTestDatabase } from './database.js';
import { payRequest } from './hub.js';
import { managementClient } from './management.js';
import { useLoopbackResolver } from './paid-world.js';
import { holdGate, paygCatalog, startPaygSeller } from './payg-seller.js';
import { bootstrapHub, exitWithin, freePort, type RunningHub, runHub, tempDataDir, waitForStatus } from './processes.js';

type Tap = Parameters<typeof tempDataDir>[0] & { ok: (value: unknown, message: string) => void };

/**
 * What every hub process of one deployment shares, for tests that start them as real processes:
 * a fresh database of `provider` (and the test's own connection to it, to read what they
 * recorded), a data directory, `chain` described in it (no chain: no payments), one master key
 * and one internal token.
 */
export async function hubProcessesEnv(t: Tap, provider: Provider, chain?: LocalChain) {
  const { db, database } = await createTestDatabase(t, provider);
  const { dataDir } = tempDataDir(t);
  const chainFile = join(dataDir, 'chain.json');
  if (chain) await writeDeploymentFile(chainFile, chain);
  const env = {
    DATABASE_URL: database.url,
    HUB_DATA_DIR: dataDir,
    ...(chain ? { HUB_CHAIN_FILE: chainFile } : {}),
    HUB_DEV_CHAIN: 'off',
    HUB_MASTER_KEY: randomBytes(32).toString('hex'),
    HUB_INTERNAL_TOKEN: randomBytes(24).toString('base64url'),
  };
  return { db, env };
}

/**
 * A paying world of real processes, for tests that kill them: `hub start control-plane` and
 * `hub start proxy` on one fresh database of `provider`, settling on `chain`, and a seller `acme`
 * selling `search` / `calls` at $0.01 a call (payg), its catalog made through the API. The seller
 * asks for payment the first time it sees a request id and serves its retry; `/hold` is answered
 * only when the test releases it (a paid call kept in flight at the seller). The pending loop
 * passes every 200 ms, so what a crash left is finished within the test. `settings` adds to both
 * processes' environment (tracing, say).
 */
export async function startProcessWorld(t: Tap, provider: Provider, chain: LocalChain, settings: Record<string, string> = {}) {
  const { db, env: shared } = await hubProcessesEnv(t, provider, chain);
  const [cpPort, proxyPort] = [await freePort(), await freePort()];
  // A paid call may be held across a restart, which on a busy machine takes tens of seconds: the
  // agent's request and the seller's answer are given two minutes instead of the default 30 s.
  const env = {
    ...shared,
    HUB_CONTROL_PLANE_PORT: String(cpPort),
    HUB_PROXY_PORT: String(proxyPort),
    HUB_PENDING_INTERVAL_MS: '200',
    HUB_REQUEST_TIMEOUT_MS: '120000',
    HUB_UPSTREAM_HEADERS_TIMEOUT_MS: '120000',
    ...settings,
  };
  const start = async (role: 'control-plane' | 'proxy', port: number) => {
    const started = runHub(t, ['start', role], env);
    t.ok(await waitForStatus(`http://127.0.0.1:${port}/readyz`, 200, 120_000), `the ${role} is ready`);
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

  const { apiKey } = await bootstrapHub(env, 'Crashes');
  const api = managementClient(`http://127.0.0.1:${cpPort}`);
  const hold = holdGate();
  const seller = await startPaygSeller(t, 'search', async (req) => {
    if (new URL(req.url ?? '/', 'http://seller').pathname === '/hold') await hold.held();
  });
  const payTo = chain.accounts[2]!.address;
  const payer = chain.accounts[3]!;
  const catalog = await paygCatalog(api, apiKey, {
    slug: 'acme',
    serviceSlug: 'search',
    upstreamBaseUrl: seller.url,
    payToAddress: payTo,
    network: chain.network,
    secrets: seller.secrets,
  });

  return {
    /** The database both processes use, for the test to read what they recorded (never to write). */
    db,
    api,
    apiKey,
    payTo,
    payer: payer.address,
    payerKey: payer.privateKey as Hex,
    served: seller.served,
    /** The seller's signing secrets by id, for a test's account endpoint to verify hub's writes. */
    sellerSecrets: seller.secrets,
    catalog,
    payUrl: (path: string) => `http://acme.pay.localhost:${proxyPort}${path}`,
    /** A request to the pay URL of `slug`, as `TestHub.pay` sends it (agent registration takes this). */
    pay: (slug: string, path: string, init?: RequestInit & { headers?: Record<string, string> }) =>
      payRequest(`http://127.0.0.1:${proxyPort}`, path, `${slug}.pay.localhost`, init),
    /** Runs `hub <args>` against this deployment, as its operator would; its exit code. */
    cli: (args: string[]) => exitWithin(runHub(t, args, env), 30_000),
    /** Lets the seller answer the requests it holds at `/hold`. */
    releaseHold: hold.release,
    /** What the running control-plane printed (its log lines, warnings and up at the world's level), for a failure's diagnostics. */
    controlPlaneOutput: () => controlPlane.stdout() + controlPlane.stderr(),
    restartControlPlane: async (whileDown?: () => Promise<unknown>) => {
      controlPlane = await restart(controlPlane, 'control-plane', cpPort, whileDown);
    },
    restartProxy: async (whileDown?: () => Promise<unknown>) => {
      proxy = await restart(proxy, 'proxy', proxyPort, whileDown);
    },
    /**
     * A second `hub start control-plane` and a `hub start proxy` that calls only it, on the same
     * database and chain (replicas behind a load balancer); the pay URL of that proxy.
     */
    startReplica: async () => {
      const [replicaCpPort, replicaProxyPort] = [await freePort(), await freePort()];
      const replicaEnv = { ...env, HUB_CONTROL_PLANE_PORT: String(replicaCpPort), HUB_PROXY_PORT: String(replicaProxyPort) };
      for (const [role, port] of [
        ['control-plane', replicaCpPort],
        ['proxy', replicaProxyPort],
      ] as const) {
        runHub(t, ['start', role], replicaEnv);
        t.ok(await waitForStatus(`http://127.0.0.1:${port}/readyz`, 200, 120_000), `the replica's ${role} is ready`);
      }
      return { payUrl: (path: string) => `http://acme.pay.localhost:${replicaProxyPort}${path}` };
    },
  };
}
