import type { DiscoveryCatalog } from '../../shared/contract.js';
import type { Route } from '../../shared/schemas/routes.js';

/**
 * A discovery catalog for rendering the documents without a hub: the `forecast` service's routes,
 * each priced at 0.01 USD a call on its `payg` plan, whose `calls` price carries `note`.
 */
export function forecastCatalog(routes: Partial<Route>[], note: string | null = null): DiscoveryCatalog {
  return {
    seller: { id: 'sel_000000000000000000000000', slug: 'acme', name: 'Acme' },
    payment: {
      network: 'eip155:31337',
      asset: '0x0000000000000000000000000000000000000001',
      decimals: 6,
      payTo: '0x0000000000000000000000000000000000000002',
      maxTimeoutSeconds: 60,
    },
    salesEnabled: false,
    routes: routes.map((route) => ({
      serviceSlug: 'forecast',
      route: { method: 'GET', path: '/', usage: [{ meterSlug: 'calls', quantity: 1 }], ...route },
      price: { planSlug: 'payg', amountMicros: '10000', amountUsd: '0.010000' },
    })),
    prices: [
      {
        serviceSlug: 'forecast',
        planSlug: 'payg',
        billingMode: 'payg',
        meterSlug: 'calls',
        unit: 'call',
        priceUsd: '0.010000',
        unitSize: 1,
        description: note,
      },
    ],
  };
}
