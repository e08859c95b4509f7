/**
 * What the account endpoint answers hub (spec: Seller account endpoint › Write replies, Mint
 * replies), and the checks on what a seller's hooks hand back: a hook returning something off the
 * contract is a handler failure (503), never a malformed 200.
 */

/** Retry hints are capped at 30 minutes by hub; the default mint retry is 30 seconds. */
export const MAX_RETRY_AFTER_SECONDS = 1800;
export const DEFAULT_MINT_RETRY_SECONDS = 30;

export type WriteReply = { lifecycle: 'active' } | { lifecycle: 'provisioning'; retryAfterSeconds: number };

export type MintDecision =
  | { apiKey: string; keyExpiresAt?: string; maxKeys?: number }
  | { notProvisioned: true; retryAfterSeconds?: number }
  | { conflict: { code: string } };

export type Reply = { status: number; body: unknown; headers?: Record<string, string> };

export const UNKNOWN_ACCOUNT: Reply = { status: 404, body: { unknown: true } };

class HookContractError extends Error {
  override name = 'HookContractError';
}

function retryHint(seconds: unknown, fallback: number): number {
  if (seconds === undefined) return fallback;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0)
    throw new HookContractError('retryAfterSeconds must be a non-negative number');
  return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil(seconds)));
}

export function writeReply(reply: WriteReply): Reply {
  if (reply?.lifecycle === 'active') return { status: 200, body: { lifecycle: 'active' } };
  if (reply?.lifecycle === 'provisioning') {
    return {
      status: 200,
      body: { lifecycle: 'provisioning', retryAfterSeconds: retryHint(reply.retryAfterSeconds, DEFAULT_MINT_RETRY_SECONDS) },
    };
  }
  throw new HookContractError('lifecycle must return { lifecycle: "active" } or { lifecycle: "provisioning", retryAfterSeconds }');
}

export function mintReply(decision: MintDecision): Reply {
  if (decision && 'apiKey' in decision) {
    const { apiKey, keyExpiresAt, maxKeys } = decision;
    if (typeof apiKey !== 'string' || apiKey.length === 0) throw new HookContractError('apiKey must be a non-empty string');
    const body: { apiKey: string; keyExpiresAt?: string; maxKeys?: number } = { apiKey };
    if (keyExpiresAt !== undefined) {
      if (typeof keyExpiresAt !== 'string' || Number.isNaN(Date.parse(keyExpiresAt)))
        throw new HookContractError('keyExpiresAt must be an ISO 8601 timestamp');
      body.keyExpiresAt = keyExpiresAt;
    }
    if (maxKeys !== undefined) {
      if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) throw new HookContractError('maxKeys must be a positive integer');
      body.maxKeys = maxKeys;
    }
    // The key goes straight to the buyer; nothing between may keep a copy.
    return { status: 200, body, headers: { 'cache-control': 'no-store' } };
  }
  if (decision && 'notProvisioned' in decision && decision.notProvisioned === true) {
    return {
      status: 409,
      body: { notProvisioned: true, retryAfterSeconds: retryHint(decision.retryAfterSeconds, DEFAULT_MINT_RETRY_SECONDS) },
    };
  }
  if (decision && 'conflict' in decision && typeof decision.conflict?.code === 'string' && decision.conflict.code.length > 0) {
    return { status: 409, body: { conflict: { code: decision.conflict.code } } };
  }
  throw new HookContractError('mintKey must return { apiKey }, { notProvisioned: true } or { conflict: { code } }');
}
