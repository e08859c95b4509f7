import { STRANDED_CALL_MS_DEFAULT } from '../../../shared/config.js';
import type { Db } from '../../db/client.js';
import { sqlOf } from '../../db/sql.js';
import { networksOf, type PaymentRails, railOf } from '../rails.js';
import { releaseCreditCall, releaseInFlight } from './credit-call.js';
import { attemptsInTurn } from './in-turn.js';
import { settleAndRecord, type WhenCaptureFails } from './record.js';
import { submittingOn } from './under-way.js';

/**
 * Releases paid calls that never settled (the proxy stopped between admitting the paid retry and
 * settling it, which comes before the agent sees any of the answer): in flight for longer than
 * any answer may take, they are released, nothing charged. A credit-paid call gets its draw back;
 * a wallet's signed authorization is never submitted and lapses.
 */
export async function releaseStrandedCalls(db: Db, olderThanMs = STRANDED_CALL_MS_DEFAULT): Promise<number> {
  const stranded = await db.paymentAttempt.findMany({
    where: { kind: { in: ['call', 'identity'] }, status: 'in_flight', verifiedAt: { lt: new Date(Date.now() - olderThanMs) } },
    select: { id: true, sellerId: true, payer: true, amountMicros: true, protocol: true },
    take: 100,
  });
  let released = 0;
  for (const attempt of stranded) {
    const done = await sqlOf(db).transaction((tx) =>
      attempt.protocol === 'credit' ? releaseCreditCall(tx, attempt) : releaseInFlight(tx, attempt.id),
    );
    if (done) released++;
  }
  return released;
}

/** How long a parked settlement is looked at again on a rail that reads the chain. */
const PARKED_LOOKED_AT_MS = 24 * 60 * 60_000;

/**
 * Settles again every attempt left `settling` (a timeout, a crash), each on the rail it was made
 * on; settling twice is safe. Not one this process is still settling (a slow chain, a seller
 * settled after its answer), nor one parked because no facilitator answer could tell its outcome
 * (`settlementReason` set), unless its rail reads the chain, which can (for a day: a settlement
 * the chain could not tell of by then is left to whoever operates the deployment), nor one made
 * on a rail this hub no longer has: it waits for that rail. A page a pass, in turn (in-turn.ts).
 */
export async function finishPendingSettlements(
  db: Db,
  rails: PaymentRails,
  olderThanMs = 10_000,
  whenCaptureFails?: WhenCaptureFails,
): Promise<number> {
  const now = Date.now();
  const pending = await attemptsInTurn(db, 'settlements', {
    status: 'settling',
    settlementReason: null,
    network: { in: networksOf(rails) },
    verifiedAt: { lt: new Date(now - olderThanMs) },
  });
  // Asked apart, so parked ones the chain cannot tell of yet never crowd out the rest.
  const reading = networksOf(rails, (rail) => rail.readsChain);
  if (reading.length) {
    pending.push(
      ...(await attemptsInTurn(db, 'parked settlements', {
        status: 'settling',
        settlementReason: 'outcome_unknown',
        network: { in: reading },
        verifiedAt: { lt: new Date(now - olderThanMs), gt: new Date(now - PARKED_LOOKED_AT_MS) },
      })),
    );
  }
  let finished = 0;
  for (const attempt of pending) {
    const rail = railOf(rails, attempt);
    if (!rail || submittingOn(rail).has(attempt.id)) continue;
    // One that throws (a row that no longer parses, a database hiccup) does not hold up the rest.
    const result = await settleAndRecord(db, rail, attempt, { again: true, whenCaptureFails }).catch(() => undefined);
    if (result?.status === 'settled') finished++;
  }
  return finished;
}
