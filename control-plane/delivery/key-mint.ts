import type { UpstreamAddresses } from '../../runtime/upstream-addresses.js';
import type { MintedKey } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { accessEndpointUrlOf } from '../catalog/access-endpoint.js';
import type { Db } from '../db/client.js';
import { emailForSeller } from '../storefront/email-policy.js';
import { heldBy } from '../storefront/holders.js';
import { type AccountCall, callAccountEndpoint, SecretCache } from './account-call.js';
import { MINT_BUDGET, type MintBudget, mintWithRetries } from './mint-attempts.js';
import { DELIVERY_SCHEDULE, type DeliverySchedule } from './schedule.js';

/**
 * `POST /keys/redeem` (spec: Pay URL endpoints, Key mint body and result, Mint replies): asks the
 * stateful seller to mint a key for one of the accounts the agent or its human holds, within the
 * response budget, and relays the answer. The key passes through and is never stored or logged.
 *
 * Refused before the seller is asked: servicing off, or a seller that takes no account writes
 * (501 `entitlements_not_available`); no account, or one the caller does not hold (404
 * `access_not_found`); several accounts and none named (400 `invalid_request`); an account the
 * seller has not acknowledged as active yet (409 `account_not_provisioned`, retry after 30 s).
 *
 * The seller's temporary failures are retried within what the agent can wait for
 * (mint-attempts.ts); past that, 502 `key_mint_failed` with `retryAfterSeconds`. A plan whose
 * re-mint policy is `rotating` answers `maxKeys: 1` (spec: Mint rules). The buyer's email goes
 * with the later variant's mint only as the plan's `verifiedEmailPolicy` allows.
 */
export async function redeemKey(
  db: Db,
  masterKey: Buffer,
  input: { sellerId: string; agentId: string; accessId?: string | undefined },
  addresses?: UpstreamAddresses,
  schedule: DeliverySchedule = DELIVERY_SCHEDULE,
  budget: MintBudget = MINT_BUDGET,
): Promise<MintedKey> {
  const seller = await db.seller.findUniqueOrThrow({ where: { id: input.sellerId } });
  if (!seller.servicingEnabled) throw new ApiError('entitlements_not_available', 'Key servicing is off for this seller.');
  if (!seller.stateful) throw new ApiError('entitlements_not_available', 'This seller issues no keys: its calls are authorized by hub.');
  const agent = await db.agent.findUniqueOrThrow({
    where: { id: input.agentId },
    select: { buyerId: true, buyer: { select: { email: true, emailVerifiedAt: true } } },
  });
  const held = await db.access.findMany({
    where: { sellerId: seller.id, ...heldBy(input.agentId, agent.buyerId) },
    select: { id: true, agentId: true, provisioningState: true, plan: { select: { remintPolicy: true, verifiedEmailPolicy: true } } },
  });
  const account = input.accessId === undefined ? onlyOne(held) : held.find((a) => a.id === input.accessId);
  if (!account) throw new ApiError('access_not_found', 'You hold no such account here: see /purchases/receipt.');
  if (account.provisioningState !== 'active') {
    throw new ApiError('account_not_provisioned', 'The seller has not set this account up yet.', { retryAfterSeconds: 30 });
  }

  const secrets = new SecretCache(db, masterKey);
  const call = mintCall(seller, account, input.agentId, {
    id: agent.buyerId,
    email: emailForSeller(account.plan.verifiedEmailPolicy, agent.buyer),
  });
  const outcome = await mintWithRetries((budgetMs) => callAccountEndpoint(secrets, call, budgetMs, addresses), schedule, budget);
  switch (outcome.kind) {
    case 'minted':
      return {
        accessId: account.id,
        apiKey: outcome.apiKey,
        // A rotating plan keeps one live key per account, whatever the seller's reply said of it.
        ...(account.plan.remintPolicy === 'rotating' ? { maxKeys: 1 } : outcome.maxKeys ? { maxKeys: outcome.maxKeys } : {}),
        ...(outcome.keyExpiresAt ? { keyExpiresAt: outcome.keyExpiresAt } : {}),
      };
    case 'no_secret':
      throw new ApiError('signing_secret_required');
    case 'not_provisioned':
      throw new ApiError('account_not_provisioned', 'The seller is still setting this account up.', {
        retryAfterSeconds: Math.ceil(outcome.afterMs / 1000),
      });
    case 'refused':
      throw new ApiError('key_mint_refused', 'The seller refused to mint a key.', { sellerCode: outcome.sellerCode });
    case 'failed':
      throw new ApiError('key_mint_failed', outcome.reason);
    case 'gave_up':
      throw new ApiError('key_mint_failed', `${capitalized(outcome.reason)} (${attemptsText(outcome.attempts)}); try again later.`, {
        retryAfterSeconds: Math.max(1, Math.ceil(outcome.retryAfterMs / 1000)),
      });
  }
}

/**
 * The mint call for the redeeming agent. The original variant's body and agent header name the
 * account's own customer (spec: the agent-id header is "the customer the account belongs to"):
 * hub has checked that the redeeming agent is that agent or another agent of the same human, and
 * the seller, which hears of no human in that variant, knows the account by its customer only.
 * The later variant names the redeeming agent and vouches for its human with `buyerId`, which the
 * seller matches against the account.
 */
function mintCall(
  seller: Parameters<typeof accessEndpointUrlOf>[0] & { id: string; accountWriteVariant: string; sandbox: boolean },
  account: { id: string; agentId: string },
  redeemingAgentId: string,
  buyer: { id: string | null; email: string | null },
): AccountCall {
  const url = `${accessEndpointUrlOf(seller)}/${encodeURIComponent(account.id)}/keys`;
  const base = { sellerId: seller.id, sandbox: seller.sandbox, url, purpose: 'access.mint' as const, requestId: newId('request') };
  if (seller.accountWriteVariant === 'later') {
    return {
      ...base,
      agentId: redeemingAgentId,
      body: { agentId: redeemingAgentId, buyerId: buyer.id, buyerEmail: buyer.email },
      buyer,
    };
  }
  return { ...base, agentId: account.agentId, body: { agent: account.agentId } };
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
const attemptsText = (n: number) => (n === 1 ? '1 attempt' : `${n} attempts`);

function onlyOne<T>(held: T[]): T | undefined {
  if (held.length > 1) throw new ApiError('invalid_request', `You hold ${held.length} accounts here: name one with accessId.`);
  return held[0];
}
