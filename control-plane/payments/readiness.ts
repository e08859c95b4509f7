import type { PaymentsReadiness, RailsReadiness } from '../../shared/contract.js';
import type { PaymentRail } from './rail.js';
import type { PaymentRails } from './rails.js';

export type { PaymentsReadiness, RailsReadiness };

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

const byRail = new WeakMap<PaymentRail, () => Promise<PaymentsReadiness>>();
const withoutRail = paymentsReadiness(undefined);

/** The one `paymentsReadiness` of a rail, for every asker (start-up's line, the control-plane's /readyz, the proxy's through ping). */
export function readinessOf(rail: PaymentRail | undefined): () => Promise<PaymentsReadiness> {
  if (!rail) return withoutRail;
  const known = byRail.get(rail);
  if (known) return known;
  const readiness = paymentsReadiness(rail);
  byRail.set(rail, readiness);
  return readiness;
}

/**
 * Whether the deployment can take payments: its live rail's answer (the one rail's, of a
 * deployment with one), and beside it `testRail`, the test rail's, when there is one
 * (docs/decisions.md#D-313).
 */
export async function railsReadiness(rails: PaymentRails): Promise<RailsReadiness> {
  const [live, test] = await Promise.all([readinessOf(rails.live)(), rails.test && readinessOf(rails.test)()]);
  return test ? { ...live, testRail: test } : live;
}

async function ask(rail: PaymentRail | undefined): Promise<PaymentsReadiness> {
  const reason = rail ? await rail.whyUnavailable?.() : NO_RAIL;
  return reason === undefined ? { payments: 'available' } : { payments: 'unavailable', reason };
}
