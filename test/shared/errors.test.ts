import t from 'tap';
import { ApiError, errorCodes, errorResponse, INTERNAL_ERROR_MESSAGE } from '../../shared/errors.js';

// Every code the spec's Errors section names, with its status.
const specCodes: Record<string, number> = {
  missing_bearer_token: 401,
  invalid_token: 401,
  auth_type_not_allowed: 403,
  insufficient_scope: 403,
  organization_required: 403,
  organization_permission_required: 403,
  seller_not_found: 404,
  service_not_found: 404,
  meter_not_found: 404,
  plan_not_found: 404,
  plan_meter_price_not_found: 404,
  signing_secret_not_found: 404,
  duplicate_slug: 409,
  duplicate_key: 409,
  duplicate_plan_meter_price: 409,
  payg_price_not_whole_cents: 422,
  checkout_incomplete: 409,
  access_inactive: 402,
  plan_expired: 402,
  usage_exhausted: 402,
  meter_not_priced: 409,
  access_not_found: 404,
  invalid_zeroclick_signature: 401,
  allowance_unavailable: 503,
  invalid_request: 400,
  amount_required: 400,
  payg_not_purchasable: 400,
  amount_not_cent_increment: 400,
  amount_below_minimum: 400,
  encryption_not_configured: 400,
  invalid_compact_jwe: 400,
  unsupported_jwe_suite: 400,
  jwe_kid_required: 400,
  unknown_jwe_kid: 400,
  private_reply_jwk: 400,
  invalid_reply_jwk: 400,
  bearer_required: 401,
  payment_required: 402,
  signing_secret_required: 409,
  payment_request_mismatch: 409,
  payment_request_already_completed: 409,
  payment_request_in_flight: 409,
  payment_amount_mismatch: 409,
  usage_not_priced: 409,
  entitlements_not_available: 501,
  capped_pricing_unavailable: 503,
};

t.test('the table holds every spec code with the spec status', async (t) => {
  for (const [code, status] of Object.entries(specCodes)) {
    t.equal((errorCodes as Record<string, { status: number }>)[code]?.status, status, code);
  }
});

t.test('ApiError renders the envelope', async (t) => {
  t.same(new ApiError('seller_not_found').toBody(), { error: 'seller_not_found' });
  t.same(new ApiError('payment_required', 'settlement_failed', { settlementReason: 'insufficient_funds' }).toBody(), {
    error: 'payment_required',
    reason: 'settlement_failed',
    settlementReason: 'insufficient_funds',
  });
  const limited = new ApiError('rate_limited', undefined, { retryAfterSeconds: 3 });
  t.same(errorResponse(limited), { status: 429, body: { error: 'rate_limited', retryAfterSeconds: 3 } });
  // A code's extra fields are typed: a field it does not carry does not compile.
  // @ts-expect-error usage_not_priced adds nothing to its envelope
  t.ok(new ApiError('usage_not_priced', undefined, { serviceSlug: 'search' }));
  // @ts-expect-error rate_limited's retryAfterSeconds is a number of seconds
  t.ok(new ApiError('rate_limited', undefined, { retryAfterSeconds: '3' }));
  // What another process answered passes through as it was sent.
  t.same(ApiError.fromBody(402, { error: 'payment_required', reason: 'x', zcRequestId: 'hubreq_x' }).toBody(), {
    error: 'payment_required',
    reason: 'x',
    zcRequestId: 'hubreq_x',
  });
});

t.test('validation errors put the message in `error` with 400', async (t) => {
  const err = ApiError.validation('name: Required');
  t.same(errorResponse(err), { status: 400, body: { error: 'name: Required' } });
});

t.test('anything else is a bare 500 that leaks nothing', async (t) => {
  const r = errorResponse(new Error('SELECT * FROM secrets failed at /srv/app.ts:12'));
  t.same(r, { status: 500, body: { error: INTERNAL_ERROR_MESSAGE } });
  t.same(errorResponse('string thrown'), { status: 500, body: { error: 'Internal server error' } });
});
