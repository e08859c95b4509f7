/**
 * Which kind of constraint a failed write ran into, on either database and either way of writing:
 * the ORM reports a unique violation as P2002, a raw statement reports P2010 with the driver
 * adapter's error kind.
 */
export type Violation = 'unique' | 'not_null';

export function violatedConstraint(err: unknown): Violation | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { code, meta } = err as { code?: unknown; meta?: { driverAdapterError?: { cause?: { kind?: unknown } } } };
  if (code === 'P2002') return 'unique';
  const kind = meta?.driverAdapterError?.cause?.kind;
  if (kind === 'UniqueConstraintViolation') return 'unique';
  if (kind === 'NullConstraintViolation') return 'not_null';
  return undefined;
}
