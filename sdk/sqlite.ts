/**
 * The SQLite account store, apart from the rest of the SDK so that only sellers who use it need
 * better-sqlite3 installed. See sdk/README.md.
 */
export { SqliteAccountStore } from './account/sqlite-store.js';
