import type Stripe from 'stripe';
import type { Prisma } from '../../generated/prisma/sqlite/client.js';
import { ApiError } from '../../shared/errors.js';
import type { CheckoutConfirmation } from '../../shared/schemas/card-payments.js';
import type { RequestContext } from '../context.js';
import { organizationPlanOffer } from './organization-plan-offers.js';
import { confirmStatusOf, planStateOf } from './plan-state.js';
import { callProvider, cardProvider } from './provider.js';

/**
 * Confirms an organization's checkout session (spec: Checkout session transitions). The provider
 * is asked, never the caller: a session it does not report `complete` is 409
 * `checkout_incomplete` and nothing changes. A complete one whose subscription serves activates
 * the plan and adds its credits, once: the session row's `completedAt` is set by exactly one
 * confirm (a conditional update), and only that one adds them. Repeats answer the same state.
 */
export async function confirmCheckout(ctx: RequestContext, organizationId: string, sessionId: string): Promise<CheckoutConfirmation> {
  const { stripe, config } = cardProvider(ctx.config);
  const row = await ctx.db.checkoutSession.findFirst({ where: { id: sessionId, organizationId } });
  if (!row?.planSlug) throw new ApiError('checkout_session_not_found');
  const offer = organizationPlanOffer(ctx.config, row.planSlug);
  // A read: the provider needs no idempotency key for it, and asking twice changes nothing.
  const session = await callProvider(ctx.logger, 'checkout.sessions.retrieve', () =>
    stripe.checkout.sessions.retrieve(sessionId, { expand: ['subscription'] }),
  );
  if (session.status !== 'complete') throw new ApiError('checkout_incomplete');
  const subscription = session.subscription;
  if (!subscription || typeof subscription === 'string') {
    throw new ApiError('card_provider_error', 'The card provider reported a complete checkout without its subscription.');
  }
  const state = planStateOf(subscription);
  const status = confirmStatusOf(subscription);
  if (status === 'active') {
    await ctx.db.$transaction((tx) => activate(tx, organizationId, sessionId, subscription, offer.slug, offer.creditMicros));
  }
  const plan = await ctx.db.organizationPlan.findUnique({ where: { organizationId } });
  const trialUsed = plan?.trialUsed ?? subscription.trial_end !== null;
  return {
    status,
    clientSecret: status === 'requires_action' ? session.client_secret : null,
    publishableKey: config.publishableKey,
    plan: state,
    trialAvailable: offer.trialDays > 0 && !trialUsed,
    trialEnd: state.trialEnd,
    access: { state: status === 'active' ? 'active' : 'none' },
  };
}

async function activate(
  tx: Prisma.TransactionClient,
  organizationId: string,
  sessionId: string,
  subscription: Stripe.Subscription,
  planSlug: string,
  credit: bigint,
) {
  const state = planStateOf(subscription);
  const first = await tx.checkoutSession.updateMany({
    where: { id: sessionId, organizationId, completedAt: null },
    data: {
      status: 'complete',
      completedAt: new Date(),
      planStatus: state.status,
      currentPeriodStart: toDate(state.currentPeriodStart),
      currentPeriodEnd: toDate(state.currentPeriodEnd),
      cancelAtPeriodEnd: state.cancelAtPeriodEnd,
      trialEnd: toDate(state.trialEnd),
    },
  });
  const added = first.count === 1 ? credit : 0n;
  const fields = {
    planSlug,
    subscriptionId: state.id,
    status: state.status,
    currentPeriodStart: toDate(state.currentPeriodStart),
    currentPeriodEnd: toDate(state.currentPeriodEnd),
    cancelAtPeriodEnd: state.cancelAtPeriodEnd,
    trialEnd: toDate(state.trialEnd),
  };
  const trialUsed = subscription.trial_end !== null;
  await tx.organizationPlan.upsert({
    where: { organizationId },
    create: { organizationId, ...fields, trialUsed, creditGrantedMicros: added },
    update: { ...fields, ...(trialUsed ? { trialUsed } : {}), creditGrantedMicros: { increment: added } },
  });
}

function toDate(iso: string | null): Date | null {
  return iso === null ? null : new Date(iso);
}
