/**
 * Rows in groups of at most `size`, one multi-row statement each: a statement's parameters must
 * stay within SQLite's and PostgreSQL's limits.
 */
export function* chunks<T>(rows: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < rows.length; i += size) yield rows.slice(i, i + size);
}
