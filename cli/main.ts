import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createLogger } from '../runtime/logger.js';
import { onShutdownSignal, runMain } from '../runtime/process.js';
import { resolveMasterKey } from '../runtime/secrets.js';
import { loadConfig } from '../shared/config.js';

const USAGE = `usage: hub <command>

  start                      run the control-plane and the proxy (restarting a crashed one)
  start control-plane|proxy  run one process
  migrate                    apply database migrations and exit
  bootstrap --email <e> [--org <name>] [--password <p>] [--json]
                             create an organization, its admin, a dashboard session and an API key
  chain up [--port <n>]      run a local anvil chain with the HubUSD token; writes data/chain.json
`;

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'hub.js');

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start':
      return start(rest[0]);
    case 'migrate':
      return migrate();
    case 'bootstrap':
      return bootstrapCommand(rest);
    case 'chain':
      return (await import('./chain.js')).chainCommand(rest);
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
    onShutdownSignal(cp.logger, cp.stop);
    return;
  }
  if (role === 'proxy') {
    const { startProxy } = await import('../proxy/main.js');
    const proxy = await startProxy();
    onShutdownSignal(proxy.logger, proxy.stop);
    return;
  }
  if (role !== undefined) throw new Error(`hub start takes control-plane or proxy, not "${role}"`);

  // Validate once here so a bad setting prints one line instead of two crashing children,
  // and create the development master key before both processes reach for it.
  const config = loadConfig();
  resolveMasterKey(config);
  const { supervise } = await import('./supervisor.js');
  process.exit(await supervise(bin, ['control-plane', 'proxy']));
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
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const email = values.email?.trim() ?? '';
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new Error('bootstrap needs --email <address>');
  if (values.password !== undefined && values.password.length < 8) throw new Error('--password must be at least 8 characters');

  const config = loadConfig();
  const { migrateDatabase } = await import('../control-plane/db/migrate.js');
  const { openDatabase } = await import('../control-plane/db/client.js');
  const { bootstrap } = await import('../control-plane/bootstrap.js');
  await migrateDatabase(config.database);
  const { db, close } = await openDatabase(config.database);
  const result = await bootstrap(db, {
    email,
    organizationName: values.org?.trim() || 'My organization',
    ...(values.password ? { password: values.password } : {}),
  });
  await close();

  if (values.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else {
    process.stdout.write(
      [
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

await runMain('cli', () => main(process.argv.slice(2)));
