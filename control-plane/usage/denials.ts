import { USAGE_DENIALS, type UsageDenial } from '../../shared/usage.js';

export type Denied = { ok: false; reason: UsageDenial };

export function denied(reason: UsageDenial): Denied {
  return { ok: false, reason };
}

/**
 * Of two denials, the one that got further through the checks. Where a request has several
 * accesses behind it and none allows it, the answer is the denial of the access that came
 * closest: "usage_exhausted" on one beats "plan_expired" on another.
 */
export function furthest(a: UsageDenial, b: UsageDenial): UsageDenial {
  return USAGE_DENIALS.indexOf(b) > USAGE_DENIALS.indexOf(a) ? b : a;
}
