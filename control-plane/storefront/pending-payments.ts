import type { Db } from '../db/client.js';
import type { PaymentRails } from '../payments/rails.js';
import { finishPendingHolds } from '../payments/settlement/hold.js';
import { finishPendingSettlements, releaseStrandedCalls } from '../payments/settlement/pending.js';
import type { WhenCaptureFails } from '../payments/settlement/record.js';
import { suspendUnpaid } from './account-changes.js';
import { finishPurchases } from './purchase.js';

/** A captured reservation whose settlement failed: its account was not paid for, and is suspended. */
export const suspendUnpaidCapture: WhenCaptureFails = (db, accessId) => db.$transaction((tx) => suspendUnpaid(tx, accessId));

/**
 * What a crash, a timeout or a stopped buyer left unfinished: settlements still `settling` are
 * settled again, holds and returns of held purchases submitted again, purchases paid or held late
 * get their accounts, and paid calls stranded in flight are released (a credit-paid call gets its
 * draw back). Each on the rail it was made on.
 */
export async function finishPendingPayments(db: Db, rails: PaymentRails, strandedCallMs?: number) {
  const settled = (await finishPendingSettlements(db, rails, undefined, suspendUnpaidCapture)) + (await finishPendingHolds(db, rails));
  const opened = await finishPurchases(db);
  const released = await releaseStrandedCalls(db, strandedCallMs);
  return { settled, opened, released };
}
