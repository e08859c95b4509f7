import { ApiError, type RaisableCode } from '../../shared/errors.js';

/**
 * Uniqueness (slugs, meter keys, hostnames, one price per plan and meter) is left to the
 * database's unique indexes, which also hold under concurrent writes on several control-planes.
 * A violation names its model on both SQLite and PostgreSQL; each model here has one unique
 * index a caller can hit, so the model is enough to pick the code.
 */
export async function withUniqueCodes<T>(codes: Record<string, RaisableCode>, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const model = violatedModel(err);
    const code = model ? codes[model] : undefined;
    if (code) throw new ApiError(code);
    throw err;
  }
}

function violatedModel(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || (err as { code?: unknown }).code !== 'P2002') return undefined;
  const modelName = (err as { meta?: { modelName?: unknown } }).meta?.modelName;
  return typeof modelName === 'string' ? modelName : undefined;
}

/**
 * Which kind of constraint a failed write ran into, on either database and any way of writing:
 * the ORM reports a unique violation as P2002, a raw statement through it P2010 with the driver
 * adapter's error kind, and the SQL lane (sql.ts) the driver's own error: PostgreSQL's SQLSTATE,
 * or better-sqlite3's extended result code.
 */
export type Violation = 'unique' | 'not_null';

const DRIVER_CODES: Record<string, Violation> = {
  '23505': 'unique',
  '23502': 'not_null',
  SQLITE_CONSTRAINT_UNIQUE: 'unique',
  SQLITE_CONSTRAINT_PRIMARYKEY: 'unique',
  SQLITE_CONSTRAINT_NOTNULL: 'not_null',
};

export function violatedConstraint(err: unknown): Violation | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { code, meta } = err as { code?: unknown; meta?: { driverAdapterError?: { cause?: { kind?: unknown } } } };
  if (code === 'P2002') return 'unique';
  if (typeof code === 'string' && Object.hasOwn(DRIVER_CODES, code)) return DRIVER_CODES[code];
  const kind = meta?.driverAdapterError?.cause?.kind;
  if (kind === 'UniqueConstraintViolation') return 'unique';
  if (kind === 'NullConstraintViolation') return 'not_null';
  return undefined;
}
