/**
 * Words for the refusals a person meets in the dashboard. The API leaves a code's default reason
 * out of its envelope (`{"error":"duplicate_slug"}`), so the page says it itself, and names the
 * field a code is about, so the message shows beside that input. Other codes read as their words.
 */
export const CODE_WORDS: Record<string, { text: string; field?: string }> = {
  invalid_credentials: { text: 'Email or password is wrong.' },
  rate_limited: { text: 'Too many attempts; try again later.' },
  organization_permission_required: { text: 'Only an admin of this organization may do that.' },
  duplicate_slug: { text: 'That slug is taken already.', field: 'slug' },
  duplicate_key: { text: 'The service has a meter with that key already.', field: 'key' },
  duplicate_plan_meter_price: { text: 'The plan prices this meter already.', field: 'meterId' },
  duplicate_hostname: { text: 'That hostname already serves a seller.', field: 'hostnames' },
  duplicate_member: { text: 'That person is a member already.', field: 'email' },
  payg_price_not_whole_cents: { text: 'A pay-as-you-go price must be a whole number of cents.', field: 'priceUsd' },
  last_admin: { text: 'An organization keeps at least one admin.' },
  resource_in_use: { text: 'Delete or move what depends on this first.' },
};
