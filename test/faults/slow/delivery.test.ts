import t from 'tap';
import { startAccountReceiver } from '../../helpers/account-receiver.js';
import { registerAgent } from '../../helpers/agents.js';
import { testProviders } from '../../helpers/database.js';
import { payRequest } from '../../helpers/hub.js';
import { managementClient } from '../../helpers/management.js';
import { hubProcessesEnv } from '../../helpers/process-world.js';
import { exitWithin, freePort, runHub, waitForStatus } from '../../helpers/processes.js';

// A control-plane killed (SIGKILL) while an account write is out, and started again: the write is
// delivered again from the outbox once the dead process's lease lapses, under the same request id
// (the idempotency key the seller de-duplicates by), and hub records it delivered once. Real
// processes, the product's own start command, and the SDK's endpoint as the seller; SQLite and
// PostgreSQL.

for (const provider of testProviders())
  t.test(`an account write survives its control-plane being killed mid-delivery, on ${provider}`, async (t) => {
    const { env: shared } = await hubProcessesEnv(t, provider);
    const [cpPort, proxyPort] = [await freePort(), await freePort()];
    const env = {
      ...shared,
      HUB_CONTROL_PLANE_PORT: String(cpPort),
      HUB_PROXY_PORT: String(proxyPort),
      HUB_DELIVERY_LEASE_MS: '1500',
    };
    const startControlPlane = async () => {
      const cp = runHub(t, ['start', 'control-plane'], env);
      t.ok(await waitForStatus(`http://127.0.0.1:${cpPort}/readyz`, 200), 'control-plane ready');
      return cp;
    };
    let cp = await startControlPlane();
    runHub(t, ['start', 'proxy'], env);
    t.ok(await waitForStatus(`http://127.0.0.1:${proxyPort}/readyz`, 200), 'proxy ready');
    const boot = runHub(t, ['bootstrap', '--email', 'ops@example.com', '--json'], env);
    t.equal(await exitWithin(boot, 30_000), 0);
    const { apiKey } = JSON.parse(boot.stdout()) as { apiKey: string };
    const api = managementClient(`http://127.0.0.1:${cpPort}`);
    const created = async (path: string, body?: unknown) => {
      const reply = await api.post(path, apiKey, body);
      if (reply.status !== 201) throw new Error(`${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
      return reply.body;
    };

    // A stateful seller with a free trial, its endpoint the SDK's, first answering nothing for a long while.
    const secrets = new Map<string, string>();
    const receiver = await startAccountReceiver(t, (kid) => secrets.get(kid));
    receiver.mode = { kind: 'sleep', sleepMs: 60_000 };
    const { seller } = await created('/v1/sellers', { name: 'Acme', slug: 'acme', upstreamBaseUrl: 'http://127.0.0.1:9' });
    const secret = await created(`/v1/sellers/${seller.id}/signing-secrets`);
    secrets.set(secret.signingSecret.id, secret.secret);
    await api.put(`/v1/sellers/${seller.id}/stateful-access`, apiKey, { stateful: true, accessEndpointUrl: receiver.url });
    const { service } = await created('/v1/services', { sellerId: seller.id, name: 'Search', slug: 'search' });
    const { plan } = await created('/v1/plans', {
      serviceId: service.id,
      name: 'Trial',
      slug: 'trial',
      kind: 'free_trial',
      billingMode: 'subscription',
      verifiedEmailPolicy: 'off',
    });
    const sales = runHub(t, ['seller', 'stateful-access', seller.id, '--sales', 'on'], env);
    t.equal(await exitWithin(sales, 30_000), 0);

    const pay = (slug: string, path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
      payRequest(`http://127.0.0.1:${proxyPort}`, path, `${slug}.pay.localhost`, init);
    const agent = await registerAgent({ pay }, 'acme');
    const opened = await pay('acme', '/extend', {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ planId: plan.id }),
    });
    t.equal(opened.status, 201);
    const { accessId } = ((await opened.json()) as { account: { accessId: string } }).account;
    const requestId = `${accessId}:1`;
    const seen = () => receiver.requests.filter((r) => r.requestId === requestId).length;

    for (let i = 0; i < 100 && seen() === 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    t.equal(seen(), 1, 'the write is out');
    cp.child.kill('SIGKILL');
    await cp.exited;
    receiver.mode = { kind: 'sdk' };

    cp = await startControlPlane();
    let status = '';
    for (let i = 0; i < 100 && status !== 'applied'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const writes = (await api.get(`/v1/account-writes?sellerId=${seller.id}`, apiKey)).body.accountWrites as { status: string }[];
      status = writes[0]?.status ?? '';
    }
    t.equal(status, 'applied', 'delivered by the restarted control-plane');
    t.equal(seen(), 2, 'once before the kill, once after');
    t.same(
      receiver.requests.filter((r) => r.requestId?.startsWith(`${accessId}:`)).map((r) => r.requestId),
      [requestId, requestId],
      'both under the same request id, the idempotency key the seller de-duplicates by',
    );
    const writes = (await api.get(`/v1/account-writes?sellerId=${seller.id}`, apiKey)).body.accountWrites as { status: string }[];
    t.equal(writes.length, 1, 'hub has one write for it, applied: delivered once as far as hub is concerned');
    t.match(await receiver.store.get(accessId), { accessId, stateVersion: 1, agentId: agent.agentId });
  });
