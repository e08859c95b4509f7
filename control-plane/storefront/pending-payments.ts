import type { Db } from '../db/client.js';
import type { PaymentRail } from '../payments/rail.js';
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
 * draw back).
 */
export async function finishPendingPayments(db: Db, rail: PaymentRail | undefined, strandedCallMs?: number) {
  const settled = (await finishPendingSettlements(db, rail, undefined, suspendUnpaidCapture)) + (await finishPendingHolds(db, rail));
  const opened = await finishPurchases(db);
  const released = await releaseStrandedCalls(db, strandedCallMs);
  return { settled, opened, released };
}
