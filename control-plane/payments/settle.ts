import { type PaymentAttempt, Prisma } from '../../generated/prisma/sqlite/client.js';
import { within } from '../../runtime/within.js';
import {
  type Adjustment,
  type BillingSummary,
  SETTLE_ANSWER_WITHIN_MS,
  type SettleInput,
  type SettleOutcome,
} from '../../shared/contract.js';
import { formatUsd, microsToTokenUnits } from '../../shared/money.js';
import { paymentPayloadSchema } from '../../shared/payments/x402-wire.js';
import { countTransaction } from '../analytics/traffic-rollup.js';
import type { Db } from '../db/client.js';
import { bigintOf, type Sql, sqlOf } from '../db/sql.js';
import { SAYS_NOTHING_OF_EARLIER, toSettleResponse } from '../facilitator/results.js';
import { suspendUnpaid } from '../storefront/account-changes.js';
import { readAttempt } from './attempt-rows.js';
import { creditRemainder, returnCredit } from './credit.js';
import { type CatalogPrice, type PaymentSeller, paymentSeller } from './payment-seller.js';
import { payPerCallCost } from './price.js';
import type { PaymentRail } from './rail.js';
import { attemptRequirements } from './requirements.js';

type Challenged = { meterSlug: string; quantity: number };

/**
 * Finishes a paid request once the seller answered. Nothing is charged unless the seller
 * delivered a 2xx (the authorization then lapses). After a 2xx, each meter settles at
 * min(reported, authorized): usage reported for the request (from `hub-usage` or a usage report)
 * by the time settlement starts (a report after that is refused: usage/resolve.ts) and, when none
 * was reported, the challenged usage. `exact` to the seller moves the whole
 * authorization, so a smaller charge leaves a remainder credited to the payer; through the escrow
 * (a ceiling-priced call) the remainder goes back to the payer in the same transaction. A charge
 * of zero submits nothing and lets the authorization expire. A settlement whose outcome is
 * unknown stays `settling` and is finished later by `finishPendingSettlements`; it is never
 * submitted as a new payment. A seller that settles after the answer gets `settling` at once, and
 * the settlement follows (`settleAfterResponse`).
 */
export async function settlePaidRequest(db: Db, rail: PaymentRail | undefined, input: SettleInput): Promise<SettleOutcome> {
  const sql = sqlOf(db);
  const attempt = await readAttempt(sql, input.paymentId);
  if (!attempt) throw new Error(`No payment ${input.paymentId} to settle.`);
  const delivered = input.upstreamStatus >= 200 && input.upstreamStatus <= 299;
  if (attempt.protocol === 'credit') return settleFromCredit(db, attempt, delivered, input.upstreamStatus);
  if (!delivered) {
    await sql.run(Prisma.sql`UPDATE "PaymentAttempt" SET "status" = 'released', "chargedMicros" = 0
      WHERE "id" = ${attempt.id} AND "status" = 'in_flight'`);
    await sql.run(Prisma.sql`UPDATE "RequestRecord" SET "upstreamStatus" = ${input.upstreamStatus} WHERE "id" = ${attempt.requestId}`);
    return { kind: 'released' };
  }
  if (attempt.kind === 'identity') {
    await sql.run(Prisma.sql`UPDATE "PaymentAttempt" SET "status" = 'delivered', "chargedMicros" = 0
      WHERE "id" = ${attempt.id} AND "status" = 'in_flight'`);
    return { kind: 'identity' };
  }

  const seller = await paymentSeller(db, attempt.sellerId);
  const prices = await planPrices(attempt, async () => seller);
  const authorized = attempt.amountMicros;
  // `exact` to the seller moves the whole authorization: what was not charged is the payer's credit.
  // Through the escrow, it goes back to the payer's wallet.
  const remainderHandling = attempt.payoutTo ? 'escrow_returned' : 'credited';
  const { charged, adjusted } = await sql.transaction(async (tx) => {
    await tx.run(Prisma.sql`UPDATE "PaymentAttempt" SET "status" = 'settling' WHERE "id" = ${attempt.id}`);
    const charge = await settledCharge(tx, attempt, prices);
    await tx.run(
      charge.charged === 0n
        ? Prisma.sql`UPDATE "PaymentAttempt" SET "status" = 'settled', "chargedMicros" = 0, "remainderHandling" = 'escrow_expired',
          "settledAt" = ${new Date()} WHERE "id" = ${attempt.id}`
        : Prisma.sql`UPDATE "PaymentAttempt" SET "chargedMicros" = ${charge.charged}, "remainderHandling" = ${remainderHandling}
          WHERE "id" = ${attempt.id}`,
    );
    return charge;
  });
  if (charged === 0n) {
    return { kind: 'billed', adjusted, billing: billingSummary('settled', authorized, 0n, 'escrow_expired', null), receipt: null };
  }

  const settling = { ...attempt, chargedMicros: charged };
  const stillSettling: SettleOutcome = {
    kind: 'billed',
    adjusted,
    billing: billingSummary('settling', authorized, charged, remainderHandling, null),
    receipt: null,
  };
  if (seller?.settlement === 'after_response') {
    settleBehindTheAnswer(settleAndRecord(db, rail, settling));
    return stillSettling;
  }
  const result = await settleInTime(db, rail, settling);
  if (!result) return stillSettling;
  if (result.status === 'failed') return { kind: 'failed', settlementReason: result.reason, adjusted };
  const settled = result.status === 'settled';
  return {
    kind: 'billed',
    adjusted,
    billing: billingSummary(settled ? 'settled' : 'settling', authorized, charged, remainderHandling, result.transaction ?? null),
    // The payer as hub recorded it (lowercased), not as the facilitator spelled it.
    receipt: { ...toSettleResponse(result), ...(attempt.payer ? { payer: attempt.payer } : {}) },
  };
}

/**
 * `settleAndRecord`, waited for at most `SETTLE_ANSWER_WITHIN_MS`: a chain (or facilitator) slower
 * than the proxy waits must not cost the agent its answer. Undefined past that; the settlement
 * goes on behind the answer.
 */
export async function settleInTime(db: Db, rail: PaymentRail | undefined, attempt: Settleable) {
  const settlement = settleAndRecord(db, rail, attempt);
  const result = await within(settlement, SETTLE_ANSWER_WITHIN_MS);
  if (!result) settleBehindTheAnswer(settlement);
  return result;
}

/** Settlements that go on after their answer went out, until they are recorded. */
const following = new Set<Promise<unknown>>();

/**
 * A settlement the answer did not wait for: for a seller that settles after the answer
 * (`settlement: after_response`), or one slower than `SETTLE_ANSWER_WITHIN_MS`. The attempt is
 * `settling` already, so a control-plane that stops before this ends leaves it to
 * `finishPendingSettlements`, which finds a transfer already on chain rather than sending another.
 * A failure is recorded as for any settlement; the agent has its answer by then.
 */
function settleBehindTheAnswer(settlement: Promise<unknown>): void {
  const followed = settlement.catch(() => {
    // Left `settling`: the pending loop settles it again.
  });
  following.add(followed);
  void followed.finally(() => following.delete(followed));
}

/**
 * Settles once every settlement that went on after its answer has been recorded (or given up to
 * the pending loop), or after `maxWaitMs`: one stuck on an unanswering node is left to the pending loop.
 */
export async function settlementsAfterResponse(maxWaitMs = 10_000): Promise<void> {
  await within(
    (async () => {
      while (following.size) await Promise.all(following);
    })(),
    maxWaitMs,
  );
}

/**
 * A call paid from the payer's credit (challenge.ts drew its price): after a 2xx it is charged
 * what was used and the rest goes back to the credit; any other answer gives it all back. No
 * transaction moves, so there is no receipt. Marked once, so a settle asked twice returns once.
 */
async function settleFromCredit(db: Db, attempt: PaymentAttempt, delivered: boolean, upstreamStatus: number): Promise<SettleOutcome> {
  const sql = sqlOf(db);
  if (!delivered) {
    await sql.transaction(async (tx) => {
      await releaseCreditCall(tx, attempt);
      await tx.run(Prisma.sql`UPDATE "RequestRecord" SET "upstreamStatus" = ${upstreamStatus} WHERE "id" = ${attempt.requestId}`);
    });
    return { kind: 'released' };
  }
  const prices = await planPrices(attempt, () => paymentSeller(db, attempt.sellerId));
  const { charged, adjusted } = await sql.transaction(async (tx) => {
    const marked = await tx.run(Prisma.sql`UPDATE "PaymentAttempt" SET "status" = 'settled', "remainderHandling" = 'credited',
      "settledAt" = ${new Date()} WHERE "id" = ${attempt.id} AND "status" = 'in_flight'`);
    const charge = await settledCharge(tx, attempt, prices);
    if (marked !== 1) return charge;
    await tx.run(Prisma.sql`UPDATE "PaymentAttempt" SET "chargedMicros" = ${charge.charged} WHERE "id" = ${attempt.id}`);
    await returnCredit(tx, attempt, attempt.amountMicros - charge.charged);
    if (charge.charged > 0n) await countTransaction(tx, { ...attempt, chargedMicros: charge.charged });
    return charge;
  });
  const billing = billingSummary('settled', attempt.amountMicros, charged, 'credited', null);
  return { kind: 'billed', adjusted, billing: { ...billing, paidFrom: 'credit' }, receipt: null };
}

/** Releases a credit-paid call still in flight and gives its whole draw back; nothing when it ended already. */
async function releaseCreditCall(tx: Sql, attempt: Pick<PaymentAttempt, 'id' | 'sellerId' | 'payer' | 'amountMicros'>): Promise<boolean> {
  if (!(await releaseInFlight(tx, attempt.id))) return false;
  await returnCredit(tx, attempt, attempt.amountMicros);
  return true;
}

/** Marks a call still in flight released, nothing charged; false when it ended already. */
async function releaseInFlight(tx: Sql, attemptId: string): Promise<boolean> {
  const marked = await tx.run(Prisma.sql`UPDATE "PaymentAttempt" SET "status" = 'released', "chargedMicros" = 0
    WHERE "id" = ${attemptId} AND "status" = 'in_flight'`);
  return marked === 1;
}

/**
 * Releases paid calls that never settled (the proxy stopped between admitting the paid retry and
 * settling it, which comes before the agent sees any of the answer): in flight for longer than
 * any answer may take, they are released, nothing charged. A credit-paid call gets its draw back;
 * a wallet's signed authorization is never submitted and lapses.
 */
export async function releaseStrandedCalls(db: Db, olderThanMs = 15 * 60_000): Promise<number> {
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

/**
 * Attempts whose settlement a rail (one per control-plane) is submitting now: its pending loop does
 * not start another beside it.
 */
const settlingNow = new WeakMap<PaymentRail, Set<string>>();
const noRail = new Set<string>();

function settlingOn(rail: PaymentRail | undefined): Set<string> {
  if (!rail) return noRail;
  let ids = settlingNow.get(rail);
  if (!ids) {
    ids = new Set();
    settlingNow.set(rail, ids);
  }
  return ids;
}

/** How long a parked settlement is looked at again on a rail that reads the chain. */
const PARKED_LOOKED_AT_MS = 24 * 60 * 60_000;

/**
 * Settles again every attempt left `settling` (a timeout, a crash); settling twice is safe. Not
 * one this process is still settling (a slow chain, a seller settled after its answer), nor one
 * parked because no facilitator answer could tell its outcome (`settlementReason` set), unless the
 * rail reads the chain, which can (for a day: a settlement the chain could not tell of by then is
 * left to whoever operates the deployment).
 */
export async function finishPendingSettlements(db: Db, rail: PaymentRail | undefined, olderThanMs = 10_000): Promise<number> {
  const now = Date.now();
  const pending = await db.paymentAttempt.findMany({
    where: { status: 'settling', settlementReason: null, verifiedAt: { lt: new Date(now - olderThanMs) } },
    take: 100,
  });
  // Asked apart, so parked ones the chain cannot tell of yet never crowd out the rest.
  if (rail?.readsChain) {
    pending.push(
      ...(await db.paymentAttempt.findMany({
        where: {
          status: 'settling',
          settlementReason: 'outcome_unknown',
          verifiedAt: { lt: new Date(now - olderThanMs), gt: new Date(now - PARKED_LOOKED_AT_MS) },
        },
        take: 100,
      })),
    );
  }
  let finished = 0;
  for (const attempt of pending) {
    if (settlingOn(rail).has(attempt.id)) continue;
    // One that throws (a row that no longer parses, a database hiccup) does not hold up the rest.
    const result = await settleAndRecord(db, rail, attempt, { again: true }).catch(() => undefined);
    if (result?.status === 'settled') finished++;
  }
  return finished;
}

type Settleable = {
  id: string;
  sellerId: string;
  createdAt: Date;
  amountMicros: bigint;
  /** What the settlement charges; the whole amount when not set. */
  chargedMicros: bigint | null;
  payer: string | null;
  payTo: string | null;
  /** Set when `payTo` is the escrow: the seller's wallet it pays out to. */
  payoutTo: string | null;
  /** Set before settlement only for a captured reservation: the account it pays for. */
  accessId?: string | null;
  paymentPayloadJson: string | null;
  network: string | null;
};

/**
 * Submits the settlement of an attempt already marked `settling` (with what it charges) and
 * records how it ended: `failed` with its reason and nothing charged, `settled` with the
 * transaction, or still `settling` (the outcome is not known yet; `finishPendingSettlements`
 * tries again). Every settlement, of a call, a purchase or a captured reservation, ends here.
 * `again`: an earlier submission's answer was lost, so a failure that says nothing of it (the
 * facilitator unreachable, say) leaves the attempt settling rather than failed.
 */
export async function settleAndRecord(db: Db, rail: PaymentRail | undefined, attempt: Settleable, options: { again?: boolean } = {}) {
  const here = settlingOn(rail);
  here.add(attempt.id);
  const result = await submitSettlement(rail, attempt).finally(() => here.delete(attempt.id));
  const sql = sqlOf(db);
  // Another settlement of the same attempt (the pending loop, another control-plane) may have
  // recorded it settled meanwhile: that record stands.
  if (result.status === 'failed' && options.again && SAYS_NOTHING_OF_EARLIER.has(result.reason)) return result;
  if (result.status === 'failed') {
    const marked =
      await sql.run(Prisma.sql`UPDATE "PaymentAttempt" SET "status" = 'failed', "settlementReason" = ${result.reason}, "chargedMicros" = 0
      WHERE "id" = ${attempt.id} AND "status" <> 'settled'`);
    // A captured reservation that failed, wherever it was tried: its account was not paid for.
    const { accessId } = attempt;
    if (marked === 1 && accessId) await db.$transaction((tx) => suspendUnpaid(tx, accessId));
    return result;
  }
  if (result.status !== 'settled') {
    // Parked: `settling`, marked with why the outcome cannot be told; the pending loop leaves it.
    const parked = result.unresolvable ? 'outcome_unknown' : null;
    if (result.transaction || parked) {
      await sql.run(Prisma.sql`UPDATE "PaymentAttempt" SET "settleTxHash" = COALESCE(${result.transaction ?? null}, "settleTxHash"),
        "settlementReason" = COALESCE(${parked}, "settlementReason") WHERE "id" = ${attempt.id} AND "status" = 'settling'`);
    }
    return result;
  }
  // Marked settled once (two control-planes can finish the same settlement), and counted then.
  await sql.transaction(async (tx) => {
    // Over a `failed` another settlement recorded first (which zeroed the charge), the charge is back.
    const marked = await tx.run(Prisma.sql`UPDATE "PaymentAttempt" SET "status" = 'settled', "settledAt" = ${new Date()},
      "chargedMicros" = ${attempt.chargedMicros ?? attempt.amountMicros}, "settlementReason" = NULL,
      "settleTxHash" = COALESCE(${result.transaction ?? null}, "settleTxHash") WHERE "id" = ${attempt.id} AND "status" <> 'settled'`);
    if (marked !== 1) return;
    // The escrow returned the remainder on chain; only a payment to the seller leaves one to credit.
    if (!attempt.payoutTo) await creditRemainder(tx, attempt);
    await countTransaction(tx, { ...attempt, chargedMicros: attempt.chargedMicros ?? attempt.amountMicros });
  });
  return result;
}

async function submitSettlement(rail: PaymentRail | undefined, attempt: Settleable) {
  // An escrowed payment needs a rail with the escrow to pay it out.
  if (!rail || !attempt.payTo || !attempt.paymentPayloadJson || (attempt.payoutTo && !rail.escrow)) {
    return { status: 'failed' as const, reason: 'payment_not_settleable', network: attempt.network ?? '' };
  }
  const payload = paymentPayloadSchema.parse(JSON.parse(attempt.paymentPayloadJson));
  const requirements = attemptRequirements(rail, { id: attempt.id, amountMicros: attempt.amountMicros, payTo: attempt.payTo });
  if (attempt.payoutTo && rail.escrow) {
    const charged = microsToTokenUnits(attempt.chargedMicros ?? attempt.amountMicros, rail.token.decimals);
    return rail.escrow.settle(payload, requirements, { payee: attempt.payoutTo as `0x${string}`, charged });
  }
  return rail.facilitator.settle(payload, requirements);
}

/**
 * The prices of the plan the request was challenged under, read before settlement's transaction
 * (the catalog is read outside it, and SQLite's one connection is that transaction's meanwhile).
 */
async function planPrices(attempt: Pick<PaymentAttempt, 'planId'>, seller: () => Promise<PaymentSeller | null>): Promise<CatalogPrice[]> {
  if (!attempt.planId) return [];
  const catalog = await (await seller())?.catalog();
  return catalog?.plans.get(attempt.planId)?.prices ?? [];
}

/**
 * What the request costs at min(reported, authorized) per meter, and where the two differ. Read in
 * the transaction that has just moved the attempt out of `in_flight`: usage reports take turns
 * with it on the attempt's row (usage/draw.ts › refuseClosedPayments), so every report this
 * charge leaves out is refused, none recorded and never billed.
 */
async function settledCharge(
  tx: Sql,
  attempt: Pick<PaymentAttempt, 'requestId' | 'usageJson' | 'amountMicros'>,
  prices: CatalogPrice[],
): Promise<{ charged: bigint; adjusted: Adjustment[] }> {
  const authorized = attempt.amountMicros;
  const items = (
    await tx.all<{ meterId: string; quantity: unknown }>(Prisma.sql`SELECT i."meterId", i."quantity" FROM "UsageEventItem" i
      JOIN "UsageEvent" e ON e."id" = i."usageEventId" WHERE e."requestId" = ${attempt.requestId}`)
  ).map((item) => ({ meterId: item.meterId, quantity: bigintOf(item.quantity) }));
  if (items.length === 0) return { charged: authorized, adjusted: [] };

  const byMeterId = new Map(prices.map((p) => [p.meterId, p]));
  const reported = new Map<string, bigint>();
  for (const item of items) {
    const key = byMeterId.get(item.meterId)?.meterKey ?? item.meterId;
    reported.set(key, (reported.get(key) ?? 0n) + item.quantity);
  }
  const challenged = JSON.parse(attempt.usageJson) as Challenged[];
  // A meter the 402 named twice was authorized for the sum, as usage counts it.
  const cap = new Map<string, bigint>();
  for (const c of challenged) cap.set(c.meterSlug, (cap.get(c.meterSlug) ?? 0n) + BigInt(c.quantity));
  let charged = 0n;
  const adjusted: Adjustment[] = [];
  for (const [meterSlug, quantity] of reported) {
    const authorizedQuantity = cap.get(meterSlug) ?? 0n;
    const settled = quantity < authorizedQuantity ? quantity : authorizedQuantity;
    if (settled !== quantity) adjusted.push({ meterSlug, reportedQuantity: Number(quantity), settledQuantity: Number(settled) });
    const price = prices.find((p) => p.meterKey === meterSlug);
    if (price) charged += payPerCallCost(settled, price);
  }
  return { charged: charged < authorized ? charged : authorized, adjusted };
}

export function billingSummary(
  status: 'settled' | 'settling',
  authorized: bigint,
  charged: bigint,
  remainderHandling: BillingSummary['remainderHandling'],
  tx: string | null,
): BillingSummary {
  return {
    status,
    authorizedUsd: formatUsd(authorized),
    chargedUsd: formatUsd(charged),
    remainderUsd: formatUsd(authorized - charged),
    remainderHandling,
    settleTransactionHash: tx,
  };
}
