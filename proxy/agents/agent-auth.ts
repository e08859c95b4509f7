import { AGENT_PATHS } from '../../shared/agent-paths.js';
import type { AgentAuthRecipe } from '../../shared/errors.js';
import { tokenPrefixes } from '../../shared/tokens.js';
import { originUrl, type PublicOrigin } from '../arrival/public-origin.js';

/**
 * The `auth` block every `401 bearer_required` carries: how to register, and how to get claimed by
 * the human the agent works for, so an agent developer can follow it without hub's docs.
 */
export function authRecipe(publicOrigin: PublicOrigin): AgentAuthRecipe {
  const origin = originUrl(publicOrigin);
  return {
    scheme: 'Bearer',
    tokenPrefix: tokenPrefixes.agent,
    proof: 'eip191_wallet_signature',
    challengeUrl: `${origin}${AGENT_PATHS.challenge}`,
    registerUrl: `${origin}${AGENT_PATHS.register}`,
    steps: [
      `POST ${AGENT_PATHS.challenge} with {"walletAddress":"0x…"}`,
      'sign the returned `message` with the wallet (EIP-191 personal_sign)',
      `POST ${AGENT_PATHS.register} with {"challengeId":"regc_…","signature":"0x…"}`,
      'send the returned token as Authorization: Bearer <token>',
    ],
    // Free mode and a buyer's purchases need a human owner with a verified email.
    claim: {
      url: `${origin}${AGENT_PATHS.claim}`,
      steps: [
        `POST ${AGENT_PATHS.claim} with the token and {"email":"<the email of the human you work for>"}`,
        'hub mails that person a link; the claim takes effect when they open it and press Confirm',
      ],
    },
  };
}
