import Database from 'better-sqlite3';
import type { Account, AccountPlan, AccountStatus } from './account.js';
import type { AccountStore } from './store.js';

/**
 * Accounts in a SQLite file (better-sqlite3), in two tables prefixed `hub_` so they can sit in a
 * seller's own database. `update` runs in a `BEGIN IMMEDIATE` transaction: it takes the write
 * lock before reading, so even several processes on one file apply each write once. Money columns
 * are INTEGER micro-USD, read back as `bigint`.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS hub_accounts (
  access_id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  buyer_id TEXT,
  buyer_email TEXT,
  state_version INTEGER NOT NULL,
  plan_slug TEXT NOT NULL,
  plan_name TEXT NOT NULL,
  plan_billing_mode TEXT NOT NULL,
  plan_interval TEXT NOT NULL,
  plan_base_price_micros INTEGER NOT NULL,
  status TEXT NOT NULL,
  period_start TEXT NOT NULL,
  period_end TEXT,
  has_credit INTEGER NOT NULL,
  credit_granted_micros INTEGER NOT NULL,
  credit_reversed_micros INTEGER NOT NULL,
  balance_micros INTEGER NOT NULL CHECK (balance_micros >= 0),
  period_usage TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS hub_accounts_agent ON hub_accounts (agent_id);
CREATE INDEX IF NOT EXISTS hub_accounts_buyer ON hub_accounts (buyer_id);
CREATE TABLE IF NOT EXISTS hub_agent_buyers (
  agent_id TEXT NOT NULL,
  buyer_id TEXT NOT NULL,
  PRIMARY KEY (agent_id, buyer_id)
) WITHOUT ROWID;
`;

type Row = {
  access_id: string;
  agent_id: string;
  buyer_id: string | null;
  buyer_email: string | null;
  state_version: bigint;
  plan_slug: string;
  plan_name: string;
  plan_billing_mode: AccountPlan['billingMode'];
  plan_interval: AccountPlan['interval'];
  plan_base_price_micros: bigint;
  status: AccountStatus;
  period_start: string;
  period_end: string | null;
  has_credit: bigint;
  credit_granted_micros: bigint;
  credit_reversed_micros: bigint;
  balance_micros: bigint;
  period_usage: string;
  updated_at: string;
};

function fromRow(row: Row): Account {
  return {
    accessId: row.access_id,
    agentId: row.agent_id,
    buyerId: row.buyer_id,
    buyerEmail: row.buyer_email,
    stateVersion: Number(row.state_version),
    plan: {
      slug: row.plan_slug,
      name: row.plan_name,
      billingMode: row.plan_billing_mode,
      interval: row.plan_interval,
      basePriceMicros: row.plan_base_price_micros,
    },
    status: row.status,
    period: { start: row.period_start, end: row.period_end },
    hasCredit: row.has_credit === 1n,
    creditGrantedMicros: row.credit_granted_micros,
    creditReversedMicros: row.credit_reversed_micros,
    balanceMicros: row.balance_micros,
    periodUsage: JSON.parse(row.period_usage) as Record<string, number>,
    updatedAt: row.updated_at,
  };
}

function toRow(a: Account): Row {
  return {
    access_id: a.accessId,
    agent_id: a.agentId,
    buyer_id: a.buyerId,
    buyer_email: a.buyerEmail,
    state_version: BigInt(a.stateVersion),
    plan_slug: a.plan.slug,
    plan_name: a.plan.name,
    plan_billing_mode: a.plan.billingMode,
    plan_interval: a.plan.interval,
    plan_base_price_micros: a.plan.basePriceMicros,
    status: a.status,
    period_start: a.period.start,
    period_end: a.period.end,
    has_credit: a.hasCredit ? 1n : 0n,
    credit_granted_micros: a.creditGrantedMicros,
    credit_reversed_micros: a.creditReversedMicros,
    balance_micros: a.balanceMicros,
    period_usage: JSON.stringify(a.periodUsage),
    updated_at: a.updatedAt,
  };
}

const COLUMNS = [
  'access_id',
  'agent_id',
  'buyer_id',
  'buyer_email',
  'state_version',
  'plan_slug',
  'plan_name',
  'plan_billing_mode',
  'plan_interval',
  'plan_base_price_micros',
  'status',
  'period_start',
  'period_end',
  'has_credit',
  'credit_granted_micros',
  'credit_reversed_micros',
  'balance_micros',
  'period_usage',
  'updated_at',
] as const satisfies readonly (keyof Row)[];

export class SqliteAccountStore implements AccountStore {
  readonly #db: Database.Database;
  readonly #ownsDb: boolean;
  readonly #select: Database.Statement<[string], Row>;
  readonly #selectByAgent: Database.Statement<[string], Row>;
  readonly #selectByBuyer: Database.Statement<[string], Row>;
  readonly #upsert: Database.Statement<[Row]>;
  readonly #link: Database.Statement<[string, string]>;
  readonly #linked: Database.Statement<[string, string], { one: bigint }>;
  readonly #update: (accessId: string, change: (current: Account | undefined) => { account?: Account; result: unknown }) => unknown;

  /** A file name (`:memory:` works) or an open better-sqlite3 database, which stays the caller's to close. */
  constructor(database: string | Database.Database) {
    this.#ownsDb = typeof database === 'string';
    this.#db = typeof database === 'string' ? new Database(database) : database;
    if (this.#ownsDb) {
      this.#db.pragma('journal_mode = WAL');
      this.#db.pragma('busy_timeout = 5000');
    }
    this.#db.exec(SCHEMA);
    const db = this.#db;
    this.#select = db.prepare<[string], Row>('SELECT * FROM hub_accounts WHERE access_id = ?').safeIntegers(true);
    this.#selectByAgent = db.prepare<[string], Row>('SELECT * FROM hub_accounts WHERE agent_id = ? ORDER BY access_id').safeIntegers(true);
    this.#selectByBuyer = db.prepare<[string], Row>('SELECT * FROM hub_accounts WHERE buyer_id = ? ORDER BY access_id').safeIntegers(true);
    this.#upsert = db.prepare<[Row]>(
      `INSERT INTO hub_accounts (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((c) => `@${c}`).join(', ')})
       ON CONFLICT (access_id) DO UPDATE SET ${COLUMNS.filter((c) => c !== 'access_id')
         .map((c) => `${c} = excluded.${c}`)
         .join(', ')}`,
    );
    this.#link = db.prepare<[string, string]>('INSERT OR IGNORE INTO hub_agent_buyers (agent_id, buyer_id) VALUES (?, ?)');
    this.#linked = db
      .prepare<[string, string], { one: bigint }>('SELECT 1 AS one FROM hub_agent_buyers WHERE agent_id = ? AND buyer_id = ?')
      .safeIntegers(true);
    const transaction = db.transaction(
      (accessId: string, change: (current: Account | undefined) => { account?: Account; result: unknown }) => {
        const row = this.#select.get(accessId);
        const { account, result } = change(row && fromRow(row));
        if (account !== undefined) {
          if (account.accessId !== accessId) throw new Error(`update of ${accessId} returned account ${account.accessId}`);
          this.#upsert.run(toRow(account));
        }
        return result;
      },
    );
    this.#update = (accessId, change) => transaction.immediate(accessId, change);
  }

  async get(accessId: string): Promise<Account | undefined> {
    const row = this.#select.get(accessId);
    return row && fromRow(row);
  }

  async update<T>(accessId: string, change: (current: Account | undefined) => { account?: Account; result: T }): Promise<T> {
    return this.#update(accessId, change) as T;
  }

  async byAgent(agentId: string): Promise<Account[]> {
    return this.#selectByAgent.all(agentId).map(fromRow);
  }

  async byBuyer(buyerId: string): Promise<Account[]> {
    return this.#selectByBuyer.all(buyerId).map(fromRow);
  }

  async linkAgent(agentId: string, buyerId: string): Promise<void> {
    this.#link.run(agentId, buyerId);
  }

  async isLinked(agentId: string, buyerId: string): Promise<boolean> {
    return this.#linked.get(agentId, buyerId) !== undefined;
  }

  async close(): Promise<void> {
    if (this.#ownsDb && this.#db.open) this.#db.close();
  }
}
