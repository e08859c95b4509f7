import { Prisma } from '../../generated/prisma/sqlite/client.js';

/**
 * An account as its stateful seller has it: a later period end, or credit, from a change the
 * seller has not applied yet is not drawn on (docs/decisions.md › Held purchases). One text of each
 * rule, for the usage reader and the draw alike. `table` qualifies the columns (`a`), or nothing
 * where they need none (an UPDATE's RETURNING).
 */
export function appliedPeriodEnd(table?: string): Prisma.Sql {
  const end = column(table, 'periodEnd');
  const applied = column(table, 'appliedPeriodEnd');
  return Prisma.raw(`CASE WHEN ${applied} IS NOT NULL AND (${end} IS NULL OR ${applied} < ${end}) THEN ${applied} ELSE ${end} END`);
}

export function appliedBalance(table?: string): Prisma.Sql {
  return Prisma.raw(`${column(table, 'balanceMicros')} - ${column(table, 'unappliedCreditMicros')}`);
}

function column(table: string | undefined, name: string): string {
  return table ? `${table}."${name}"` : `"${name}"`;
}
