import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { containProcessFaults } from '../runtime/containment.js';
import { createLogger } from '../runtime/logger.js';
import { onShutdownSignal, runMain } from '../runtime/process.js';
import { resolveMasterKey, stageMasterKeyFile } from '../runtime/secrets.js';
import { ConfigError, loadConfig, parseMasterKey } from '../shared/config.js';
import { CONFIG_ERROR_EXIT, supervised } from './supervision.js';

const USAGE = `usage: hub <command>

  start                      run the control-plane and the proxy (restarting a crashed one)
  start control-plane|proxy  run one process (the proxy as HUB_PROXY_WORKERS workers sharing its port)
  migrate                    apply database migrations and exit
  bootstrap --email <e> [--org <name>] [--password <p>] [--another-org] [--json]
                             create an organization, its admin, a dashboard session and an API key
                             (a database that has an organization already needs --another-org)
  rotate-key                 re-seal the database's secrets under a new master key, with hub stopped;
                             the new key is HUB_NEW_MASTER_KEY, or a generated one
  chain up [--port <n>]      run a local anvil chain with the HubUSD token; writes data/chain.json
  seller stateful-access <sellerId> [--sales on|off] [--servicing on|off]
                             the operator's switch for a seller's purchases and key servicing
  --version                  print hub's version
`;

/** The command this process runs as (`bin/hub.js`, or its compiled form): the supervisor starts its processes with it. */
const hubCommand = process.argv[1] ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'hub.js');

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start':
      return start(rest[0]);
    case 'migrate':
      return migrate();
    case 'bootstrap':
      return bootstrapCommand(rest);
    case 'rotate-key':
      return rotateKey();
    case 'chain':
      return (await import('./chain.js')).chainCommand(rest);
    case 'seller':
      return (await import('./seller.js')).sellerCommand(rest);
    case '--version':
    case '-v':
    case 'version':
      process.stdout.write(`hub ${version()}\n`);
      return;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return;
    default:
      throw new Error(`unknown command "${command}"\n${USAGE}`);
  }
}

async function start(role: string | undefined): Promise<void> {
  if (role === 'control-plane') {
    const { startControlPlane } = await import('../control-plane/main.js');
    const cp = await startControlPlane();
    containProcessFaults(cp.logger);
    onShutdownSignal(cp.logger, cp.stop, { whenOrphaned: supervised() });
    return;
  }
  if (role === 'proxy') {
    const config = loadConfig();
    // Several workers share the port: this process runs them (a worker is `hub start proxy` again).
    if (config.proxy.workers > 1 && cluster.isPrimary) {
      // Made here, once, before the workers reach for it side by side (as `hub start` does).
      resolveMasterKey(config);
      const { runProxyWorkers } = await import('./proxy-workers.js');
      process.exit(await runProxyWorkers(config));
    }
    const { startProxy } = await import('../proxy/main.js');
    const proxy = await startProxy();
    containProcessFaults(proxy.logger);
    onShutdownSignal(proxy.logger, proxy.stop, { whenOrphaned: supervised() });
    return;
  }
  if (role !== undefined) throw new Error(`hub start takes control-plane or proxy, not "${role}"`);

  // Validate once here so a bad setting prints one line instead of two crashing children,
  // and create the development master key before both processes reach for it.
  const config = loadConfig();
  resolveMasterKey(config);
  const { supervise } = await import('./supervisor.js');
  // In development, the embedded default takes payments too: with no rail configured, a local chain.
  const wantsDevChain =
    config.env === 'development' &&
    config.devChain === 'auto' &&
    !process.env.HUB_FACILITATOR_URL &&
    !(await (await import('./chain.js')).describedChainAnswers(config.chainFile, createLogger('chain', config.logLevel)));
  process.exit(await supervise(hubCommand, ['control-plane', 'proxy'], wantsDevChain ? { devChainFile: config.chainFile } : {}));
}

async function migrate(): Promise<void> {
  const config = loadConfig();
  const { migrateDatabase } = await import('../control-plane/db/migrate.js');
  const applied = await migrateDatabase(config.database);
  const logger = createLogger('migrate', config.logLevel);
  logger.info({ migrations: applied }, applied.length ? 'applied migrations' : 'database is up to date');
  // The engine's PostgreSQL pool keeps a timer alive after it is done.
  process.exit(0);
}

async function bootstrapCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      email: { type: 'string' },
      org: { type: 'string' },
      password: { type: 'string' },
      'another-org': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.email === undefined) throw new Error('bootstrap needs --email <address>');
  const email = values.email.trim();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new Error(`--email: ${JSON.stringify(values.email)} is not an email address`);
  if (values.password !== undefined && values.password.length < 8) throw new Error('--password must be at least 8 characters');

  const config = loadConfig();
  const { migrateDatabase } = await import('../control-plane/db/migrate.js');
  const { openDatabase } = await import('../control-plane/db/client.js');
  const { describeDatabase } = await import('../control-plane/db/describe.js');
  const { bootstrap, BootstrapRefused } = await import('../control-plane/bootstrap.js');
  const database = describeDatabase(config.database);
  await migrateDatabase(config.database);
  const { db, close } = await openDatabase(config.database);
  const result = await bootstrap(db, {
    email,
    organizationName: values.org?.trim() || 'My organization',
    ...(values.password ? { password: values.password } : {}),
    another: values['another-org'],
  })
    .catch((err: unknown) => {
      throw err instanceof BootstrapRefused ? new Error(`${database}: ${err.message}`) : err;
    })
    .finally(close);

  if (values.json) {
    process.stdout.write(`${JSON.stringify({ ...result, database })}\n`);
  } else {
    process.stdout.write(
      [
        `database      ${database}`,
        `organization  ${result.organizationId} (${result.organizationName})`,
        `admin         ${result.userId} <${result.email}>`,
        `session token ${result.sessionToken}`,
        `API key       ${result.apiKey}  (${result.apiKeyId}; all scopes; shown once)`,
        '',
      ].join('\n'),
    );
  }
  process.exit(0);
}

/**
 * Re-seals every secret under a new master key. The development key file is replaced only after
 * the database commits; the new key is written beside it first, so it is never lost.
 */
async function rotateKey(): Promise<void> {
  const config = loadConfig();
  const current = resolveMasterKey(config);
  const given = process.env.HUB_NEW_MASTER_KEY;
  const next = given === undefined ? randomBytes(32) : parseMasterKey(given);
  if (!next) throw new ConfigError('HUB_NEW_MASTER_KEY must be 32 bytes, as 64 hex characters or base64');
  if (next.equals(current)) throw new ConfigError('HUB_NEW_MASTER_KEY is the key in use already');

  const { migrateDatabase } = await import('../control-plane/db/migrate.js');
  const { openDatabase } = await import('../control-plane/db/client.js');
  const { describeDatabase } = await import('../control-plane/db/describe.js');
  const { resealSecrets } = await import('../control-plane/master-key.js');
  await migrateDatabase(config.database);
  const keyFile = config.masterKey ? undefined : stageMasterKeyFile(config, next);
  const { db, close } = await openDatabase(config.database);
  const count = await resealSecrets(db, current, next).finally(close);
  const where = `re-sealed ${count} secret(s) in ${describeDatabase(config.database)}`;
  if (keyFile) {
    keyFile.commit();
    process.stdout.write(`${where}; the new key is in ${keyFile.path}\n`);
  } else {
    const shown = given === undefined ? `: ${next.toString('hex')}` : '';
    process.stdout.write(`${where}; start hub with HUB_MASTER_KEY set to the new key${shown}\n`);
  }
  process.exit(0);
}

function version(): string {
  const manifest = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', 'package.json'), 'utf8'));
  return String(manifest.version);
}

await runMain(
  'cli',
  () => main(process.argv.slice(2)),
  (err) => (err instanceof ConfigError && supervised() ? CONFIG_ERROR_EXIT : 1),
);
