import type { Logger } from 'pino';
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
import type { PaymentRail } from './payments/rail.js';
import { type PaymentRails, railsIn, resolvePaymentRails } from './payments/rails.js';
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

  const rails = await resolvePaymentRails(config, env);
  if (!rails.live && config.env === 'production') {
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

  await reportRails(rails, logger);
  const tracing = startTracing('hub-control-plane', config.otlpEndpoint);
  const stopPendingLoop = startPendingSettlementLoop(db, rails, logger, config.pending, config.cardPayments, tracing);
  // Each rail's channels are claimed and settled on that rail.
  const stopSessionLoops = railsIn(rails).map((rail) => startSessionLoops(db, rail, logger, config.sessions));

  const mail = new MailWorker(db, createMailTransport(config, logger), logger);
  mail.start();
  const accountWrites = new AccountWriteWorker(db, masterKey, rails, logger, {
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
    rails,
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
    const sessionsStopped = Promise.all(stopSessionLoops.map((stop) => stop()));
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

/**
 * One line at start-up for each rail says whether hub takes payments on it, and if not, why
 * (/readyz says it after); a live rail without a test rail beside it says what sandbox sellers get.
 */
async function reportRails({ live, test }: PaymentRails, logger: Logger): Promise<void> {
  if (!live) {
    logger.warn(
      'no payment rail configured: priced challenges answer 503 (set HUB_FACILITATOR_URL, or run `hub chain up` for a local one)',
    );
    return;
  }
  const report = async (rail: PaymentRail, what: string, whose: string) => {
    const readiness = await readinessOf(rail)();
    if (readiness.payments === 'available') {
      logger.info({ rail: rail.name, network: rail.network, token: rail.token.address }, `taking ${what}`);
    } else {
      logger.warn(
        { rail: rail.name, reason: readiness.reason },
        `cannot take ${what}: ${readiness.reason}; ${whose} answer 503 until it can`,
      );
    }
  };
  await report(live, 'payments', 'priced challenges');
  if (test) await report(test, 'sandbox payments', 'sandbox sellers’ priced challenges');
  else if (!live.test)
    logger.info(
      'no test rail for sandbox payments: sandbox sellers’ priced challenges answer 503 (set HUB_TEST_FACILITATOR_URL, or HUB_CHAIN_FILE for a local chain)',
    );
}
