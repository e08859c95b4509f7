import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Agentify, type AgentifyOptions } from '../../control-plane/agentify/agentify.js';
import { type BootstrapResult, bootstrap } from '../../control-plane/bootstrap.js';
import type { ControlPlaneServices } from '../../control-plane/context.js';
import { openDatabase, type Provider } from '../../control-plane/db/client.js';
import { MailWorker } from '../../control-plane/mail/outbox.js';
import { createMailTransport } from '../../control-plane/mail/transport.js';
import { PageViewIntake } from '../../control-plane/page-views/ingest.js';
import type { PaymentRail } from '../../control-plane/payments/rail.js';
import type { PaymentRails } from '../../control-plane/payments/rails.js';
import { createControlPlaneServer } from '../../control-plane/server.js';
import { closeServer, listen } from '../../runtime/http-server.js';
import { startTracing } from '../../runtime/trace-export.js';
import { upstreamAddressesOf } from '../../runtime/upstream-addresses.js';
import { type HubConfig, loadConfig } from '../../shared/config.js';
import { createTestDatabase } from './database.js';

type Tap = { teardown: (fn: () => unknown) => void };

export type TestControlPlane = ControlPlaneServices & {
  url: string;
  server: Server;
  /** A new organization with an admin, a session token and an all-scopes API key. */
  bootstrap: (email?: string) => Promise<BootstrapResult>;
};

/** One rail is the deployment's only (live) rail; two are given as `{ live, test }`. */
export type TestRails = PaymentRail | PaymentRails | undefined;

export function railsOf(rails: TestRails): PaymentRails {
  return rails && 'facilitator' in rails ? { live: rails } : (rails ?? {});
}

/** A real control-plane on a loopback port, over its own fresh database. */
export async function startTestControlPlane(
  t: Tap,
  provider: Provider,
  env: Record<string, string> = {},
  rails?: TestRails,
  agentifyOptions?: AgentifyOptions,
): Promise<TestControlPlane> {
  const { db, database } = await createTestDatabase(t, provider);
  const masterKey = randomBytes(32);
  const config: HubConfig = {
    ...loadConfig({ HUB_ENV: 'test', HUB_LOG_LEVEL: 'silent', ...env }),
    database,
    masterKey,
  };
  const logger = pino({ level: process.env.HUB_TEST_LOG_LEVEL ?? 'silent' });
  // Without an SMTP server, mail is written under a folder of this test's own.
  const mailDir = mkdtempSync(join(tmpdir(), 'hub-mail-'));
  const mail = new MailWorker(db, createMailTransport({ ...config, dataDir: mailDir }, logger), logger, { pollMs: 200 });
  mail.start();
  t.teardown(async () => {
    await mail.stop();
    rmSync(mailDir, { recursive: true, force: true });
  });
  const services: ControlPlaneServices = {
    config,
    db,
    provider,
    logger,
    masterKey,
    internalToken: randomBytes(24).toString('base64url'),
    rails: railsOf(rails),
    mail,
    pageViews: new PageViewIntake(db, logger, config.pageViews.perMinute),
    agentify: new Agentify({ ...agentifyOptions, limits: { addresses: upstreamAddressesOf(config), ...agentifyOptions?.limits } }),
    tracing: startTracing('hub-control-plane', config.otlpEndpoint),
  };
  t.teardown(() => services.agentify.close());
  const server = createControlPlaneServer(services);
  const port = await listen(server, 0, '127.0.0.1');
  t.teardown(async () => {
    await closeServer(server, 1_000);
    await services.tracing?.stop();
  });
  let n = 0;
  return {
    ...services,
    url: `http://127.0.0.1:${port}`,
    server,
    bootstrap: (email) =>
      bootstrap(db, {
        email: email ?? `admin${++n}-${randomBytes(4).toString('hex')}@example.com`,
        organizationName: 'Test org',
        another: true,
      }),
  };
}

/**
 * Another control-plane over the same database, as a second replica is: its own server and its
 * own database connections (its workers are `cp`'s: only state kept in the database is shared),
 * which `db` is, for a test that runs a worker over them.
 */
export async function startReplica(t: Tap, cp: TestControlPlane): Promise<{ url: string; db: TestControlPlane['db'] }> {
  const opened = await openDatabase(cp.config.database, { poolSize: 5 });
  t.teardown(() => opened.close());
  const server = createControlPlaneServer({ ...cp, db: opened.db });
  const port = await listen(server, 0, '127.0.0.1');
  t.teardown(() => closeServer(server, 1_000));
  return { url: `http://127.0.0.1:${port}`, db: opened.db };
}
