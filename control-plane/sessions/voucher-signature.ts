import { bytesToHex, type Hex, zeroAddress } from 'viem';
import { chainRecoverable, signedAsOnChain } from '../facilitator/contract-signature.js';
import { defaultRecoverer } from '../facilitator/signer-recovery.js';
import { parseRecoverableSignature } from '../facilitator/transfer-authorization.js';
import type { ChannelConfig } from './channel-digests.js';
import type { SessionRail } from './session-rail.js';

/**
 * Whether a voucher is the channel's, as the contract's claim will judge it: signed by the
 * channel's payer authorizer's key (recovered here, the usual case, no read); with none (zero, a
 * smart wallet's channel), by its payer as `SignatureChecker` has it: by ERC-1271 when it has code,
 * else by its key (docs/decisions.md#D-362). A signature whose `v` the chain's `ecrecover` would not
 * take is no one's: taken, it would revert the claim batch it went into. A chain that cannot be
 * read throws `FacilitatorUnavailableError`. Asked by the paid retry (claim-session.ts) and again
 * by a claim round the chain refused (claim-vouchers.ts).
 */
export async function signedForChannel(sessions: SessionRail, config: ChannelConfig, digest: Uint8Array, signature: Hex): Promise<boolean> {
  const recover = () => voucherSigner(digest, signature);
  if (config.payerAuthorizer !== zeroAddress)
    return chainRecoverable(signature) && (await recover()) === config.payerAuthorizer.toLowerCase();
  return signedAsOnChain(sessions.signatureReads, config.payer, bytesToHex(digest), signature, recover);
}

/** Who signed the voucher's digest, lowercase; undefined for a signature that recovers no one (or is not an EOA's). */
async function voucherSigner(digest: Uint8Array, signature: Hex): Promise<string | undefined> {
  const parsed = parseRecoverableSignature(signature);
  if (!parsed) return undefined;
  try {
    // The backend is chosen once per thread (signer-recovery.ts): no second cache here.
    return await (await defaultRecoverer()).recoverAddress(digest, parsed);
  } catch {
    return undefined;
  }
}
