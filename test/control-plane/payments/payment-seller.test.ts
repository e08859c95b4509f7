import t from 'tap';
import { changeCatalog } from '../../../control-plane/catalog/guards.js';
import { openDatabase } from '../../../control-plane/db/client.js';
import { paymentSeller } from '../../../control-plane/payments/payment-seller.js';
import { newId } from '../../../shared/ids.js';
import { seedPricedService } from '../../helpers/catalog-seed.js';
import { createTestDatabase, testProviders } from '../../helpers/database.js';

// The seller's catalog as payments read it: kept in memory while the seller is unchanged, read
// again as soon as any control-plane changes it.
for (const provider of testProviders()) {
  t.test(provider, async (t) => {
    const { db, database } = await createTestDatabase(t, provider);
    // A second control-plane process on the same database.
    const other = await openDatabase(database, { poolSize: 2 });
    t.teardown(() => other.close());

    const organizationId = newId('organization');
    await db.organization.create({ data: { id: organizationId, name: 'Acme' } });
    const sellerId = newId('seller');
    await db.seller.create({ data: { id: sellerId, organizationId, name: 'acme', slug: 'acme', upstreamBaseUrl: 'http://127.0.0.1:9' } });
    const { planId, priceId } = await seedPricedService(db, { organizationId, sellerId, priceMicros: 10_000n });

    const priceSeen = async () => {
      const seller = await paymentSeller(db, sellerId);
      return (await seller!.catalog()).plans.get(planId)?.prices[0]?.priceMicros;
    };
    const stampChange = (msAgo: number) => db.seller.update({ where: { id: sellerId }, data: { updatedAt: new Date(Date.now() - msAgo) } });
    // Written without marking the seller changed, which no catalog route does: shows whether memory answered.
    const writeUnmarked = (priceMicros: bigint) => db.planMeterPrice.update({ where: { id: priceId }, data: { priceMicros } });

    await t.test('an unchanged seller’s catalog is answered from memory', async (t) => {
      await stampChange(60_000);
      t.equal(await priceSeen(), 10_000n);
      await writeUnmarked(20_000n);
      t.equal(await priceSeen(), 10_000n, 'the unmarked write is not seen');
    });

    await t.test('a change through another control-plane is seen by the next read', async (t) => {
      await changeCatalog(other.db, sellerId, (tx) => tx.planMeterPrice.update({ where: { id: priceId }, data: { priceMicros: 30_000n } }));
      t.equal(await priceSeen(), 30_000n, 'just after the change');
      // The same once the change is old enough for the catalog to be kept again.
      await changeCatalog(other.db, sellerId, (tx) => tx.planMeterPrice.update({ where: { id: priceId }, data: { priceMicros: 40_000n } }));
      await stampChange(30_000);
      t.equal(await priceSeen(), 40_000n);
      await writeUnmarked(50_000n);
      t.equal(await priceSeen(), 40_000n, 'and kept from then on');
    });

    await t.test('a catalog read within two seconds of a change is not kept', async (t) => {
      // Two changes in one millisecond would leave the seller's stamp as it was.
      await stampChange(0);
      t.equal(await priceSeen(), 50_000n);
      await writeUnmarked(60_000n);
      t.equal(await priceSeen(), 60_000n);
    });

    await t.test('the seller row is read afresh every time', async (t) => {
      await stampChange(60_000);
      t.equal((await paymentSeller(db, sellerId))?.payToAddress, null);
      await other.db.seller.update({ where: { id: sellerId }, data: { payToAddress: `0x${'ab'.repeat(20)}` } });
      t.equal((await paymentSeller(db, sellerId))?.payToAddress, `0x${'ab'.repeat(20)}`);
      t.equal(await paymentSeller(db, newId('seller')), null, 'no seller, nothing');
    });
  });
}
