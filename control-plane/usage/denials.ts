import { USAGE_DENIALS, type UsageDenial } from '../../shared/usage.js';

/** `detail`: what a refused report tells the seller beside the code, where the code alone would puzzle. */
export type Denied = { ok: false; reason: UsageDenial; detail?: string };

export function denied(reason: UsageDenial, detail?: string): Denied {
  return detail === undefined ? { ok: false, reason } : { ok: false, reason, detail };
}

/**
 * Of two denials, the one that got further through the checks. Where a request has several
 * accesses behind it and none allows it, the answer is the denial of the access that came
 * closest: "usage_exhausted" on one beats "plan_expired" on another.
 */
export function furthest(a: UsageDenial, b: UsageDenial): UsageDenial {
  return USAGE_DENIALS.indexOf(b) > USAGE_DENIALS.indexOf(a) ? b : a;
}
