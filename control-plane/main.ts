import { closeServer, listen } from '../runtime/http-server.js';
import { createLogger } from '../runtime/logger.js';
import { resolveInternalToken, resolveMasterKey } from '../runtime/secrets.js';
import { startTracing } from '../runtime/trace-export.js';
import { upstreamAddressesOf } from '../runtime/upstream-addresses.js';
import { ConfigError, loadConfig } from '../shared/config.js';
import { Agentify } from './agentify/agentify.js';
import { openDatabase } from './db/client.js';
import { describeDatabase } from './db/describe.js';
import { migrateDatabase } from './db/migrate.js';
import { AccountWriteWorker } from './delivery/account-write-worker.js';
import { DELIVERY_SCHEDULE } from './delivery/schedule.js';
import { MailWorker } from './mail/outbox.js';
import { createMailTransport } from './mail/transport.js';
import { assertMasterKeyOpensSecrets } from './master-key.js';
import { PageViewIntake } from './page-views/ingest.js';
import { resolvePaymentRail } from './payments/rail.js';
import { readinessOf } from './payments/readiness.js';
import { settlementsAfterResponse } from './payments/settlement/under-way.js';
import { createControlPlaneServer } from './server.js';
import { startSessionLoops } from './sessions/session-loops.js';
import { startPendingSettlementLoop } from './storefront/pending-loop.js';

/** Starts the control-plane: migrate, open the database, serve, and stop cleanly on SIGTERM. */
export async function startControlPlane(env: Record<string, string | undefined> = process.env) {
  const config = loadConfig(env);
  const logger = createLogger('control-plane', config.logLevel);
  const masterKey = resolveMasterKey(config);
  const internalToken = resolveInternalToken(config, masterKey);

  const payments = await resolvePaymentRail(config, env);
  if (!payments && config.env === 'production') {
    throw new ConfigError(
      'no payment rail in production: set HUB_FACILITATOR_URL (with HUB_PAYMENT_NETWORK and HUB_PAYMENT_TOKEN_ADDRESS), or HUB_CHAIN_FILE for a chain of your own',
    );
  }

  const applied = await migrateDatabase(config.database);
  if (applied.length) logger.info({ migrations: applied }, 'applied migrations');
  const { db, provider, close } = await openDatabase(config.database);
  try {
    await assertMasterKeyOpensSecrets(db, masterKey, describeDatabase(config.database));
  } catch (err) {
    await close();
    throw err;
  }

  // One line at start-up says whether hub takes payments, and if not, why; /readyz says it after.
  const readiness = await readinessOf(payments)();
  if (!payments) {
    logger.warn(
      'no payment rail configured: priced challenges answer 503 (set HUB_FACILITATOR_URL, or run `hub chain up` for a local one)',
    );
  } else if (readiness.payments === 'available') {
    logger.info({ rail: payments.name, network: payments.network, token: payments.token.address }, 'taking payments');
  } else {
    logger.warn(
      { rail: payments.name, reason: readiness.reason },
      `cannot take payments: ${readiness.reason}; priced challenges answer 503 until it can`,
    );
  }
  const tracing = startTracing('hub-control-plane', config.otlpEndpoint);
  const stopPendingLoop = startPendingSettlementLoop(db, payments, logger, config.pending, config.cardPayments, tracing);
  const stopSessionLoops = startSessionLoops(db, payments, logger, config.sessions);

  const mail = new MailWorker(db, createMailTransport(config, logger), logger);
  mail.start();
  const accountWrites = new AccountWriteWorker(db, masterKey, payments, logger, {
    schedule: { ...DELIVERY_SCHEDULE, leaseMs: config.delivery.leaseMs },
    addresses: upstreamAddressesOf(config),
    ...(config.cardPayments ? { cards: config.cardPayments } : {}),
  });
  accountWrites.start();

  const pageViews = new PageViewIntake(db, logger, config.pageViews.perMinute);
  const agentify = new Agentify({ limits: { addresses: upstreamAddressesOf(config) } });
  const server = createControlPlaneServer({
    config,
    db,
    provider,
    logger,
    masterKey,
    internalToken,
    payments,
    mail,
    accountWrites,
    pageViews,
    agentify,
    tracing,
  });
  const port = await listen(server, config.controlPlane.port, config.host);
  logger.info({ port, host: config.host, database: describeDatabase(config.database) }, 'control-plane listening');

  const stop = async () => {
    stopPendingLoop();
    const sessionsStopped = stopSessionLoops();
    await closeServer(server);
    await settlementsAfterResponse();
    await sessionsStopped;
    await mail.stop();
    await accountWrites.stop();
    await pageViews.sink.drain();
    await agentify.close();
    // What is still buffered goes out once nothing more is traced.
    await tracing?.stop();
    await close();
  };
  return { server, port, stop, db, logger, pageViews, masterKey };
}
