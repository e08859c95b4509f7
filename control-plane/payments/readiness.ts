import type { PaymentRail } from './rail.js';

/** What `/readyz` says about payments beside `status`. */
export type PaymentsReadiness = { payments: 'available' } | { payments: 'unavailable'; reason: string };

const NO_RAIL = 'no payment rail configured';

/** How long one answer stands: a readiness probe may come every second, and each asks the chain. */
const FRESH_FOR_MS = 5_000;

/**
 * Whether hub can take payments now. Not being able to does not make hub unready: free and
 * identity calls and the management API still work, so `/readyz` stays 200 and says why here.
 */
export function paymentsReadiness(rail: PaymentRail | undefined, freshForMs = FRESH_FOR_MS): () => Promise<PaymentsReadiness> {
  let last: { at: number; answer: Promise<PaymentsReadiness> } | undefined;
  return () => {
    if (last && Date.now() - last.at < freshForMs) return last.answer;
    last = { at: Date.now(), answer: ask(rail) };
    return last.answer;
  };
}

async function ask(rail: PaymentRail | undefined): Promise<PaymentsReadiness> {
  const reason = rail ? await rail.whyUnavailable?.() : NO_RAIL;
  return reason === undefined ? { payments: 'available' } : { payments: 'unavailable', reason };
}
