import { z } from 'zod';
import { hubMode } from './config.js';
import { contract, type ProcedureName, type ProcedureOutput } from './contract.js';

/**
 * Answers checked against the contract's output schemas (shared/contract.ts), where they are
 * checked at all: in tests, by both ends of every call (docs/decisions.md#D-207). The proxy's client
 * checks what arrived, as JSON; the control-plane checks what a procedure returned, before it is
 * written, in both lanes (tRPC's adapter and the direct one run the same procedure). A check never
 * changes an answer: it only reads it, so a checked answer is the same bytes as an unchecked one.
 */

/** Which end found the mismatch. */
export type CheckedBy = 'proxy' | 'control-plane';

export class ContractOutputError extends Error {
  override name = 'ContractOutputError';
  constructor(
    readonly procedure: ProcedureName,
    readonly checkedBy: CheckedBy,
    issues: string,
  ) {
    super(`${procedure} answered outside the contract (checked by the ${checkedBy}):\n${issues}`);
  }
}

/**
 * Whether this process checks answers: in test mode (HUB_ENV, else NODE_ENV, is `test`), and with
 * HUB_CHECK_CONTRACT_OUTPUTS=1 (which tap sets for every test process) anywhere but production.
 */
export function contractOutputsChecked(env: Record<string, string | undefined> = process.env): boolean {
  const mode = hubMode(env);
  return mode === 'test' || (env.HUB_CHECK_CONTRACT_OUTPUTS === '1' && mode !== 'production');
}

/** Throws a `ContractOutputError` naming each mismatch when `answer` is not what `procedure` answers. */
export function checkOutput<Name extends ProcedureName>(
  procedure: Name,
  answer: unknown,
  checkedBy: CheckedBy,
): asserts answer is ProcedureOutput<Name> {
  const result = contract[procedure].output.safeParse(answer);
  if (!result.success) throw new ContractOutputError(procedure, checkedBy, z.prettifyError(result.error));
}

/**
 * `checkOutput`, made impossible to miss. The error is thrown to the caller, so a wrong answer is
 * never used, and raised again as an uncaught exception, since some callers catch what a call
 * throws and carry on (a readiness probe, the change feeds, the request recorder's retries): the
 * test that made the call fails with it, and a process started with the switch on stops.
 */
export function enforceOutput<Name extends ProcedureName>(
  procedure: Name,
  answer: unknown,
  checkedBy: CheckedBy,
): asserts answer is ProcedureOutput<Name> {
  try {
    checkOutput(procedure, answer, checkedBy);
  } catch (err) {
    process.nextTick(() => {
      throw err;
    });
    throw err;
  }
}
