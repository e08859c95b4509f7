import type { AccountCallResult } from './account-call.js';
import { type Retry, retriedStatus, unanswered } from './retried.js';
import { type DeliverySchedule, hintMs } from './schedule.js';

/**
 * What a seller's answer to one key mint means (spec: Mint replies, Limits). The Limits table's
 * retried deliveries cover the mint as well as the write: a network failure, a 429, any 5xx and a
 * 2xx that cannot be read as a key (not JSON, or no `apiKey`) are tried again, honouring
 * `Retry-After` on 429 and 5xx. A 404 and any other status fail the mint at once; a 409 is the
 * seller's own answer (not provisioned yet, or its refusal) and goes to the agent as it is.
 */
export type MintVerdict =
  | { kind: 'minted'; apiKey: string; maxKeys: number | undefined; keyExpiresAt: string | undefined }
  | { kind: 'not_provisioned'; afterMs: number }
  | { kind: 'refused'; sellerCode: string }
  | Retry
  | { kind: 'failed'; reason: string };

/** Spec: Limits › Default mint retry. */
export const DEFAULT_MINT_RETRY_MS = 30_000;

export function mintVerdict(result: Exclude<AccountCallResult, { kind: 'no_secret' }>, schedule: DeliverySchedule): MintVerdict {
  if (result.kind === 'unreachable') return unanswered(result);
  const retry = retriedStatus(result, schedule);
  if (retry) return retry;
  const { status } = result;
  const reply = jsonObject(result.text);
  if (status >= 200 && status <= 299) {
    if (reply && typeof reply.apiKey === 'string' && reply.apiKey.length > 0) {
      return {
        kind: 'minted',
        apiKey: reply.apiKey,
        maxKeys: Number.isSafeInteger(reply.maxKeys) && (reply.maxKeys as number) > 0 ? (reply.maxKeys as number) : undefined,
        keyExpiresAt: typeof reply.keyExpiresAt === 'string' ? reply.keyExpiresAt : undefined,
      };
    }
    return { kind: 'retry', reason: `the seller answered ${status} with no key hub could read`, afterMs: undefined };
  }
  if (status === 409 && reply?.notProvisioned === true) {
    return { kind: 'not_provisioned', afterMs: hintMs(schedule, reply.retryAfterSeconds) ?? DEFAULT_MINT_RETRY_MS };
  }
  const conflict = (reply?.conflict as { code?: unknown } | undefined)?.code;
  if (status === 409 && typeof conflict === 'string' && conflict.length > 0) return { kind: 'refused', sellerCode: conflict.slice(0, 100) };
  if (status === 404) return { kind: 'failed', reason: 'The seller does not know this account.' };
  return { kind: 'failed', reason: `The seller answered ${status}.` };
}

function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
