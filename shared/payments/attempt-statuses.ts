/**
 * The statuses of a payment attempt, as the management API shows them. What moves an attempt
 * between them, and the one writer, are the control-plane's (control-plane/payments/attempt-status.ts).
 */
export const ATTEMPT_STATUSES = [
  'challenge_created',
  'in_flight',
  'delivered',
  'holding',
  'reserved',
  'settling',
  'settled',
  'failed',
  'releasing',
  'released',
  'refund_owed',
] as const;

export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];
