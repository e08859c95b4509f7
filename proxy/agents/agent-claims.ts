import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { readJsonBody } from '../../runtime/json-body.js';
import { hasNoBody, readBody } from '../../runtime/read-body.js';
import { sendJson } from '../../runtime/respond.js';
import { AGENT_PATHS } from '../../shared/agent-paths.js';
import type { ClaimView, PaySeller } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { hashToken, tokenPrefixes } from '../../shared/tokens.js';
import { describeIssues } from '../../shared/validation-message.js';
import { originUrl, publicOrigin } from '../arrival/public-origin.js';
import type { ProxyServices } from '../context.js';
import { tellSiblings } from '../worker-channel.js';
import { authRecipe } from './agent-auth.js';
import type { Caller } from './agent-directory.js';
import { type ClaimLink, claimPage } from './claim-pages.js';

/**
 * Claims on the pay URL: an agent names the email of the human it works for (`POST /agents/claim`,
 * with its bearer token), hub mails that human a link, and the link's page confirms the claim (or,
 * from the second link, releases the agent) on a button press. These paths are reserved on every
 * pay URL (docs/decisions.md › Agent claims).
 */
const LINK_PREFIXES: Record<ClaimLink, string> = { confirm: AGENT_PATHS.confirmClaim, release: AGENT_PATHS.releaseClaim };
const TOKEN_PATTERNS: Record<ClaimLink, RegExp> = {
  confirm: new RegExp(`^${tokenPrefixes.claimConfirmation}[0-9A-Za-z]{40}$`),
  release: new RegExp(`^${tokenPrefixes.claimRelease}[0-9A-Za-z]{40}$`),
};

const claimBody = z
  .object({ email: z.email('email must be an email address such as you@example.com').max(254, 'email is longer than an address can be') })
  .strict();

/** Whether a path is one of the claim routes. */
export function isClaimPath(path: string): boolean {
  return path === AGENT_PATHS.claim || path.startsWith(LINK_PREFIXES.confirm) || path.startsWith(LINK_PREFIXES.release);
}

export async function handleClaim(
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
  seller: PaySeller,
  services: ProxyServices,
): Promise<void> {
  if (path === AGENT_PATHS.claim) return requestClaim(req, res, seller, services);
  const link: ClaimLink = path.startsWith(LINK_PREFIXES.confirm) ? 'confirm' : 'release';
  return claimLinkPage(link, path.slice(LINK_PREFIXES[link].length), req, res, services);
}

async function requestClaim(req: IncomingMessage, res: ServerResponse, seller: PaySeller, services: ProxyServices): Promise<void> {
  if (req.method !== 'POST') throw new ApiError('method_not_allowed', `Use POST ${AGENT_PATHS.claim}.`);
  const origin = publicOrigin(req, services.config.proxy.trustProxy);
  const caller: Caller = await services.agents.identify(req.headers.authorization, seller.id);
  if (caller.kind !== 'agent') {
    throw new ApiError(
      'bearer_required',
      caller.kind === 'unknown_token' ? 'The agent token is unknown or was replaced.' : 'Claiming needs a registered agent credential.',
      { auth: authRecipe(origin) },
    );
  }
  const parsed = claimBody.safeParse(await readJsonBody(req, 1_024));
  if (!parsed.success) throw new ApiError('invalid_request', describeIssues(parsed.error.issues));
  const claim = await services.controlPlane.call('requestAgentClaim', {
    agentId: caller.agentId,
    sellerId: seller.id,
    email: parsed.data.email.toLowerCase(),
    // The links go to a third party by mail: on the host the seller was found by, never on a
    // forwarded host nothing checked names this seller (its owner would collect the tokens).
    payOrigin: originUrl({ scheme: origin.scheme, host: req.headers.host ?? '' }),
  });
  if (claim.status === 'claimed') return sendJson(res, 200, { status: 'claimed', email: claim.email }, { 'cache-control': 'no-store' });
  return sendJson(
    res,
    202,
    {
      status: 'pending',
      email: claim.email,
      expiresAt: claim.expiresAt,
      next: `hub mailed ${claim.email} a link; the claim takes effect when that person opens it and presses Confirm.`,
    },
    { 'cache-control': 'no-store' },
  );
}

async function claimLinkPage(link: ClaimLink, token: string, req: IncomingMessage, res: ServerResponse, services: ProxyServices) {
  const method = req.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD' && method !== 'POST')
    throw new ApiError('method_not_allowed', 'Open the link, or press its button.');
  // The form posts no fields; whatever a client sends is read and dropped.
  if (!hasNoBody(req)) await readBody(req, 4_096);
  const action = `${LINK_PREFIXES[link]}${token}`;
  if (!TOKEN_PATTERNS[link].test(token)) return sendPage(res, claimPage(link, { state: 'unknown' }, action, false), method);

  const tokenHash = hashToken(token);
  const { controlPlane, agents } = services;
  let view: ClaimView;
  if (method === 'POST') {
    view = await controlPlane.call(link === 'confirm' ? 'confirmClaim' : 'releaseClaim', { tokenHash });
    // This proxy and its sibling workers stop serving the old owner at once; other proxies
    // within a second (their poll).
    if (view.agentId) {
      agents.forget(view.agentId);
      tellSiblings({ kind: 'forget-agent', agentId: view.agentId });
    }
  } else {
    view = await controlPlane.call('viewClaim', { tokenHash, link });
  }
  return sendPage(res, claimPage(link, view, action, method === 'POST'), method);
}

function sendPage(res: ServerResponse, page: { status: number; html: string }, method: string): void {
  res.writeHead(page.status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(page.html).toString(),
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
  });
  res.end(method === 'HEAD' ? undefined : page.html);
}
