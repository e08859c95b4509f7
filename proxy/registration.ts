import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { ApiError } from '../shared/errors.js';
import { describeIssues } from '../shared/validation-message.js';
import { sendJson } from '../runtime/respond.js';
import { readBody } from '../runtime/read-body.js';
import type { ControlPlaneClient } from './control-plane-client.js';
import type { PaySeller } from './seller-catalog.js';

/**
 * Agent registration on the pay URL. An agent asks for a challenge for its wallet, signs the
 * returned message with EIP-191 (`personal_sign`), and exchanges the signature for a bearer token.
 * These paths are reserved on every pay URL (docs/decisions.md).
 */
export const REGISTRATION_PATHS = { challenge: '/agents/challenge', register: '/agents/register' } as const;

const challengeBody = z
  .object({ walletAddress: z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'walletAddress must be a 0x-prefixed 20-byte hex address') })
  .strict();
const registerBody = z
  .object({
    challengeId: z.string().regex(/^regc_[0-9A-Za-z]{24}$/, 'challengeId must be a regc_ id from /agents/challenge'),
    signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/, 'signature must be a 65-byte 0x-prefixed hex EIP-191 signature'),
  })
  .strict();

const MAX_REGISTRATION_BODY = 4_096;

async function jsonBody<T>(req: IncomingMessage, schema: z.ZodType<T>): Promise<T> {
  const raw = await readBody(req, MAX_REGISTRATION_BODY);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    throw ApiError.validation('Body must be JSON.');
  }
  const result = schema.safeParse(parsed);
  if (!result.success) throw ApiError.validation(describeIssues(result.error.issues));
  return result.data;
}

/** The `auth` block of a 401 `bearer_required`: how an agent gets a token, step by step. */
export function registrationRecipe(host: string | undefined) {
  const origin = host ? `http://${host}` : '';
  return {
    scheme: 'Bearer',
    tokenPrefix: 'hubagt_',
    proof: 'eip191_wallet_signature',
    challengeUrl: `${origin}${REGISTRATION_PATHS.challenge}`,
    registerUrl: `${origin}${REGISTRATION_PATHS.register}`,
    steps: [
      `POST ${REGISTRATION_PATHS.challenge} with {"walletAddress":"0x…"}`,
      'sign the returned `message` with the wallet (EIP-191 personal_sign)',
      `POST ${REGISTRATION_PATHS.register} with {"challengeId":"regc_…","signature":"0x…"}`,
      'send the returned token as Authorization: Bearer <token>',
    ],
  };
}

export async function handleRegistration(
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
  seller: PaySeller,
  controlPlane: ControlPlaneClient,
): Promise<void> {
  if (req.method !== 'POST') throw new ApiError('method_not_allowed', `Use POST ${path}.`);
  if (path === REGISTRATION_PATHS.challenge) {
    const body = await jsonBody(req, challengeBody);
    const result = await controlPlane.internal.agentChallenge.mutate({ walletAddress: body.walletAddress, sellerSlug: seller.slug });
    if (!result.ok) throw new ApiError('invalid_request', result.reason);
    return sendJson(
      res,
      200,
      { challengeId: result.challengeId, message: result.message, expiresAt: result.expiresAt },
      { 'cache-control': 'no-store' },
    );
  }
  const body = await jsonBody(req, registerBody);
  const result = await controlPlane.internal.agentRegister.mutate(body);
  if (!result.ok) throw new ApiError('bearer_required', result.reason, { auth: registrationRecipe(req.headers.host) });
  return sendJson(
    res,
    200,
    { agentId: result.agentId, buyerId: result.buyerId, walletAddress: result.walletAddress, token: result.token },
    { 'cache-control': 'no-store' },
  );
}
