import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { readJsonBody } from '../../runtime/json-body.js';
import { sendJson } from '../../runtime/respond.js';
import { AGENT_PATHS } from '../../shared/agent-paths.js';
import { ApiError } from '../../shared/errors.js';
import { describeIssues } from '../../shared/validation-message.js';
import { publicOrigin } from '../arrival/public-origin.js';
import type { ProxyServices } from '../context.js';
import type { PaySeller } from '../seller-catalog.js';
import { authRecipe } from './agent-auth.js';

/**
 * Agent registration on the pay URL. An agent asks for a challenge for its wallet, signs the
 * returned message with EIP-191 (`personal_sign`), and exchanges the signature for a bearer token.
 * These paths are reserved on every pay URL (docs/decisions.md).
 */

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
  const result = schema.safeParse(await readJsonBody(req, MAX_REGISTRATION_BODY));
  if (!result.success) throw new ApiError('invalid_request', describeIssues(result.error.issues));
  return result.data;
}

/** The `auth` block of a 401 `bearer_required`: how an agent gets a token, step by step. */
export async function handleRegistration(
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
  seller: PaySeller,
  services: Pick<ProxyServices, 'controlPlane' | 'config'>,
): Promise<void> {
  const { controlPlane } = services;
  if (req.method !== 'POST') throw new ApiError('method_not_allowed', `Use POST ${path}.`);
  if (path === AGENT_PATHS.challenge) {
    const body = await jsonBody(req, challengeBody);
    const challenge = await controlPlane.call('agentChallenge', { walletAddress: body.walletAddress, sellerSlug: seller.slug });
    return sendJson(res, 200, challenge, { 'cache-control': 'no-store' });
  }
  const body = await jsonBody(req, registerBody);
  const registration = await controlPlane.call('agentRegister', body).catch((err: unknown) => {
    // A refused registration says how to register, as every `bearer_required` does.
    if (err instanceof ApiError && err.code === 'bearer_required') {
      throw new ApiError('bearer_required', err.reason, { auth: authRecipe(publicOrigin(req, services.config.proxy.trustProxy)) });
    }
    throw err;
  });
  return sendJson(res, 200, registration, { 'cache-control': 'no-store' });
}
