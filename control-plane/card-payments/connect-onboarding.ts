import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { accountLink, accountLinkInput } from '../../shared/schemas/card-payments.js';
import { ownedSeller } from '../catalog/guards.js';
import type { RequestContext } from '../context.js';
import { isoFromSeconds } from './plan-state.js';
import { callProvider, cardProvider } from './provider.js';

/**
 * A seller's onboarding at the card provider (docs/decisions.md#D-241): its connected account is
 * created the first time (a standard account: the seller holds its own dashboard, payouts and
 * disputes; hub charges on it directly), then each call returns a fresh onboarding link, which the
 * provider lets be used once and for a few minutes.
 */
export async function createAccountLink(
  ctx: RequestContext,
  organizationId: string,
  input: z.infer<typeof accountLinkInput>,
): Promise<z.infer<typeof accountLink>> {
  const { stripe } = cardProvider(ctx.config);
  const seller = await ownedSeller(ctx.db, organizationId, input.sellerId);
  let accountId = seller.cardAccountId;
  let chargesEnabled = seller.cardChargesEnabled;
  if (!accountId) {
    const account = await callProvider(ctx.logger, 'accounts.create', () =>
      stripe.accounts.create(
        { type: 'standard', metadata: { hubSellerId: seller.id, hubOrganizationId: organizationId } },
        // One account per seller, however often this is retried or raced: the provider answers
        // the same account to the same key (for a day; after that the seller row has it).
        { idempotencyKey: `hub-connect-account-${seller.id}` },
      ),
    );
    accountId = account.id;
    chargesEnabled = account.charges_enabled;
    await ctx.db.seller.update({ where: { id: seller.id }, data: { cardAccountId: accountId, cardChargesEnabled: chargesEnabled } });
  }
  const account = accountId;
  const link = await callProvider(ctx.logger, 'accountLinks.create', () =>
    stripe.accountLinks.create(
      { account, type: 'account_onboarding', return_url: input.returnUrl, refresh_url: input.refreshUrl },
      // A link is single-use, so each request asks for a new one; the key covers the SDK's retries.
      { idempotencyKey: `hub-account-link-${seller.id}-${randomUUID()}` },
    ),
  );
  return { url: link.url, expiresAt: isoFromSeconds(link.expires_at)!, accountId: account, chargesEnabled };
}
