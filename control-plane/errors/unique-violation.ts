import { ApiError, type ErrorCode } from '../../shared/errors.js';

/**
 * Uniqueness (slugs, meter keys, hostnames, one price per plan and meter) is left to the
 * database's unique indexes, which also hold under concurrent writes on several control-planes.
 * A violation names its model on both SQLite and PostgreSQL; each model here has one unique
 * index a caller can hit, so the model is enough to pick the code.
 */
export async function withUniqueCodes<T>(codes: Record<string, ErrorCode>, work: () => Promise<T>): Promise<T> {
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
