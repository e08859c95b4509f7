import { parseArgs } from 'node:util';
import { loadConfig } from '../shared/config.js';

export const SELLER_USAGE = 'usage: hub seller stateful-access <sellerId> [--sales on|off] [--servicing on|off]';

/**
 * `hub seller stateful-access`: the operator's switch for a seller's storefront, which the
 * management API cannot change (spec: stateful-access). Works on the database hub runs on (the
 * same DATABASE_URL) and prints the state it leaves; without flags it only prints.
 */
export async function sellerCommand(args: string[]): Promise<void> {
  const [subcommand, ...rest] = args;
  if (subcommand !== 'stateful-access') throw new Error(SELLER_USAGE);
  const { values, positionals } = parseArgs({
    args: rest,
    options: { sales: { type: 'string' }, servicing: { type: 'string' } },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length !== 1) throw new Error(SELLER_USAGE);
  const flags = { sales: onOff(values.sales, '--sales'), servicing: onOff(values.servicing, '--servicing') };

  const config = loadConfig();
  const { migrateDatabase } = await import('../control-plane/db/migrate.js');
  const { openDatabase } = await import('../control-plane/db/client.js');
  const { describeDatabase } = await import('../control-plane/db/describe.js');
  const { setStatefulFlags } = await import('../control-plane/catalog/sellers.js');
  await migrateDatabase(config.database);
  const { db, close } = await openDatabase(config.database);
  const sellerId = positionals[0]!;
  const state = await setStatefulFlags(db, sellerId, flags)
    .catch((err: unknown) => {
      throw new Error(
        `${describeDatabase(config.database)}: ${(err as Error).message === 'No such seller.' ? `no seller ${sellerId}` : (err as Error).message}`,
      );
    })
    .finally(close);
  const word = (on: boolean) => (on ? 'on' : 'off');
  process.stdout.write(
    `${sellerId} (${state.name}): sales ${word(state.salesEnabled)}, servicing ${word(state.servicingEnabled)} — ${describeDatabase(config.database)}\n`,
  );
  process.exit(0);
}

function onOff(value: string | undefined, name: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'on' || value === 'off') return value === 'on';
  throw new Error(`${name} takes on or off, not ${JSON.stringify(value)}`);
}
