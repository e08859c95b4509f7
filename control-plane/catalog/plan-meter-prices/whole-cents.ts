import { ApiError } from '../../../shared/errors.js';
import { isWholeCents } from '../../../shared/money.js';

/** Pay-as-you-go prices are charged per call in whole cents (spec: Plan meter price › Rules). */
export function requireWholeCentsOnPayg(billingMode: string, priceMicros: bigint): void {
  if (billingMode === 'payg' && !isWholeCents(priceMicros)) throw new ApiError('payg_price_not_whole_cents');
}
