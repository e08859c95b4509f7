import { AGENT_PATHS } from '../../shared/agent-paths.js';
import type { ClaimRequested } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { hashToken, newToken } from '../../shared/tokens.js';
import type { ControlPlaneServices } from '../context.js';
import { takeTurns } from '../db/take-turns.js';
import { enqueueMail } from '../mail/outbox.js';

/**
 * An agent asks to be claimed by the human it works for, naming that human's email. hub mails the
 * address a one-time link to a page where the human confirms (docs/decisions.md › Agent claims);
 * the claim, its two link tokens (as hashes) and the mail are written in one transaction.
 */

/** How long the confirmation link works. */
export const CLAIM_LINK_LIFETIME_MS = 24 * 60 * 60 * 1000;
/** Claim requests per agent, and mails per address, in any rolling hour. */
export const CLAIMS_PER_AGENT_PER_HOUR = 5;
export const CLAIMS_PER_EMAIL_PER_HOUR = 3;
const HOUR_MS = 60 * 60 * 1000;

export async function requestAgentClaim(
  services: Pick<ControlPlaneServices, 'db' | 'mail' | 'provider'>,
  input: { agentId: string; sellerId: string; email: string; payOrigin: string },
): Promise<ClaimRequested> {
  const { db } = services;
  const agent = await db.agent.findUnique({ where: { id: input.agentId }, include: { buyer: { select: { email: true } } } });
  if (!agent) throw new ApiError('bearer_required', 'The agent token is unknown or was replaced.');
  if (agent.buyerId) {
    if (agent.buyer?.email === input.email) return { status: 'claimed', email: input.email, expiresAt: null };
    throw new ApiError('agent_already_claimed');
  }

  const seller = await db.seller.findUnique({ where: { id: input.sellerId }, select: { name: true } });
  const confirmToken = newToken('claimConfirmation');
  const releaseToken = newToken('claimRelease');
  const expiresAt = new Date(Date.now() + CLAIM_LINK_LIFETIME_MS);
  await db.$transaction(async (tx) => {
    // Counting and inserting take turns per agent and per address, or requests sent at once all
    // count the same room.
    await takeTurns(tx, services.provider, `claim-agent:${agent.id}`, `claim-email:${input.email}`);
    const since = new Date(Date.now() - HOUR_MS);
    const byAgent = await tx.agentClaim.count({ where: { agentId: agent.id, createdAt: { gte: since } } });
    if (byAgent >= CLAIMS_PER_AGENT_PER_HOUR) {
      throw new ApiError('rate_limited', `An agent may ask to be claimed ${CLAIMS_PER_AGENT_PER_HOUR} times an hour.`, {
        retryAfterSeconds: 3600,
      });
    }
    const byEmail = await tx.agentClaim.count({ where: { email: input.email, createdAt: { gte: since } } });
    if (byEmail >= CLAIMS_PER_EMAIL_PER_HOUR) {
      throw new ApiError('rate_limited', `An address is mailed at most ${CLAIMS_PER_EMAIL_PER_HOUR} claim links an hour.`, {
        retryAfterSeconds: 3600,
      });
    }
    await tx.agentClaim.create({
      data: {
        id: newId('agentClaim'),
        agentId: agent.id,
        sellerId: input.sellerId,
        payOrigin: input.payOrigin,
        email: input.email,
        tokenHash: hashToken(confirmToken),
        releaseTokenHash: hashToken(releaseToken),
        expiresAt,
      },
    });
    await enqueueMail(tx, {
      to: input.email,
      subject: `Confirm that agent ${agent.id} works for you`,
      text: claimMailText({
        agentId: agent.id,
        walletAddress: agent.walletAddress,
        sellerName: seller?.name ?? null,
        confirmUrl: `${input.payOrigin}${AGENT_PATHS.confirmClaim}${confirmToken}`,
        releaseUrl: `${input.payOrigin}${AGENT_PATHS.releaseClaim}${releaseToken}`,
      }),
    });
  });
  services.mail.wake();
  return { status: 'pending', email: input.email, expiresAt: expiresAt.toISOString() };
}

/**
 * The mail's one job: let the human recognise the agent and decide. Nothing happens until they
 * press the button on the page the link opens (a mail scanner that follows the link confirms
 * nothing); the second link releases the agent later.
 */
function claimMailText(m: { agentId: string; walletAddress: string; sellerName: string | null; confirmUrl: string; releaseUrl: string }) {
  return [
    'An AI agent says it works for you and asked hub to link it to this email address.',
    '',
    `  Agent:   ${m.agentId}`,
    `  Wallet:  ${m.walletAddress}`,
    ...(m.sellerName ? [`  Asked at: ${m.sellerName}`] : []),
    '',
    'If it is yours, open this link and press "Confirm" (the link works once, for 24 hours):',
    '',
    `  ${m.confirmUrl}`,
    '',
    'Once confirmed, what you buy through this agent is yours and reaches your other agents, and',
    'the agent can use your free allowances. If you did not expect this mail, ignore it: nothing',
    'happens unless you confirm.',
    '',
    'To release the agent later (it then loses access to what is yours):',
    '',
    `  ${m.releaseUrl}`,
    '',
  ].join('\n');
}
