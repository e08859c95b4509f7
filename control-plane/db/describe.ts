import type { DatabaseConfig } from '../../shared/config.js';

/** The database for logs and messages, without credentials. */
export function describeDatabase(database: DatabaseConfig): string {
  if (database.provider === 'sqlite') return `sqlite:${database.file}`;
  const url = new URL(database.url);
  return `postgresql://${url.host}${url.pathname}`;
}
