import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory, Transaction } from '@prisma/driver-adapter-utils';
import type { Database } from 'better-sqlite3';

/** Hub's own statements on the gated connection (db/sql.ts): run while no transaction is open. */
export type ConnectionTurns = {
  /** The adapter's better-sqlite3 connection. */
  database: Database;
  /** Runs `work` once no transaction is open, keeping others out until it settles. */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
};

/**
 * Keeps statements out of another's transaction on a single SQLite connection. Prisma's
 * better-sqlite3 adapter runs every statement on one connection and serializes transactions
 * among themselves, but a statement made outside a transaction runs at once, inside whichever
 * transaction is open at the time: an interactive transaction that awaits between statements
 * would take it in, and roll it back with its own work, or let it read what was never committed.
 * Here a statement outside a transaction, and the start of another transaction, waits until the
 * open one has committed or rolled back. PostgreSQL gives each transaction a connection of its
 * own and needs none of this. `onConnect` receives the connection and a way to take turns on it.
 */
export function withTransactionGate(
  factory: SqlMigrationAwareDriverAdapterFactory,
  onConnect: (turns: ConnectionTurns) => void = () => {},
): SqlMigrationAwareDriverAdapterFactory {
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => gate(await factory.connect(), onConnect),
    connectToShadowDb: async () => gate(await factory.connectToShadowDb(), () => {}),
  };
}

function gate(adapter: SqlDriverAdapter, onConnect: (turns: ConnectionTurns) => void): SqlDriverAdapter {
  /** Settles when the open transaction ends; undefined while none is open. */
  let open: Promise<void> | undefined;
  // Waits in a loop of its own and takes the turn in the same tick as its last look at `open`, so
  // nothing can open a transaction in between. Returns what ends the turn.
  const takeTurn = async (): Promise<() => void> => {
    while (open) await open;
    let end!: () => void;
    const ended = new Promise<void>((resolve) => {
      end = () => {
        if (open === ended) open = undefined;
        resolve();
      };
    });
    open = ended;
    return end;
  };
  const queryRaw = adapter.queryRaw.bind(adapter);
  const executeRaw = adapter.executeRaw.bind(adapter);
  const startTransaction = adapter.startTransaction.bind(adapter);
  // The adapter runs a statement synchronously when called: it is done before anything else runs.
  adapter.queryRaw = async (query) => {
    while (open) await open;
    return queryRaw(query);
  };
  adapter.executeRaw = async (query) => {
    while (open) await open;
    return executeRaw(query);
  };
  adapter.startTransaction = async (isolationLevel) => {
    const end = await takeTurn();
    let transaction: Transaction;
    try {
      transaction = await startTransaction(isolationLevel);
    } catch (err) {
      end();
      throw err;
    }
    const commit = transaction.commit.bind(transaction);
    const rollback = transaction.rollback.bind(transaction);
    transaction.commit = () => commit().finally(end);
    transaction.rollback = () => rollback().finally(end);
    return transaction;
  };
  const database = (adapter as unknown as { client?: Database }).client;
  if (database) {
    onConnect({
      database,
      exclusive: async (work) => {
        const end = await takeTurn();
        try {
          return await work();
        } finally {
          end();
        }
      },
    });
  }
  return adapter;
}
