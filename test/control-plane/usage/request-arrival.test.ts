import t from 'tap';
import { recordRequests } from '../../../control-plane/internal/request-records.js';
import { isRecordedRequestId, newRequestId } from '../../../shared/ids.js';
import { bindingsAndProviders, usageWorld } from '../../helpers/usage-world.js';

// The proxy forwards an identified agent's request while its record is still on the way to the
// control-plane. A usage check or report that comes first waits for the record, when the request
// id says one is coming (a digit after `hubreq_`), and only then.
for (const [provider, binding] of bindingsAndProviders()) {
  t.test(`a record still on its way, on ${provider} through the ${binding} binding`, async (t) => {
    const w = await usageWorld(t, provider, binding);
    const agentId = await w.agent();
    await w.access({ agentId });
    const requests = [{ meterSlug: 'requests', quantity: 1 }];
    const store = (id: string) =>
      recordRequests(w.db, {
        created: [
          {
            id,
            sellerId: w.sellerId,
            agentId,
            method: 'GET',
            path: '/forecast',
            sandbox: false,
            lifecycle: 'forwarded',
            createdAt: new Date().toISOString(),
          },
        ],
        completed: [],
        tallies: [],
      });
    const later = (ms: number, fn: () => Promise<unknown>) =>
      new Promise((resolve, reject) => setTimeout(() => fn().then(resolve, reject), ms));

    await t.test('a check that comes first is answered once the record is stored', async (t) => {
      const id = newRequestId(true);
      const [reply] = await Promise.all([
        w.check({ zcRequestId: id, serviceSlug: 'forecast', usage: requests }),
        later(200, () => store(id)),
      ]);
      t.same(reply.body, { allowed: true, reason: null });
    });

    await t.test('so is a report, which then draws on the access', async (t) => {
      const id = newRequestId(true);
      const [reply] = await Promise.all([
        w.report({ idempotencyKey: `k-${id}`, zcRequestId: id, serviceSlug: 'forecast', usage: requests }),
        later(200, () => store(id)),
      ]);
      t.equal(reply.status, 200, JSON.stringify(reply.body));
      t.equal((await w.events(id)).length, 1);
    });

    await t.test('a record that never comes is access_not_found after the wait', async (t) => {
      const reply = await w.check({ zcRequestId: newRequestId(true), serviceSlug: 'forecast', usage: requests });
      t.same(reply.body, { allowed: false, reason: 'access_not_found' });
    });

    await t.test('an id of an unrecorded (anonymous) call is not waited for', async (t) => {
      const id = newRequestId(false);
      // Stored a second later: a check that waited would find it and allow the call.
      const [reply] = await Promise.all([
        w.check({ zcRequestId: id, serviceSlug: 'forecast', usage: requests }),
        later(1_000, () => store(id)),
      ]);
      t.same(reply.body, { allowed: false, reason: 'access_not_found' });
    });
  });
}

t.test('request ids carry whether the proxy records the request', async (t) => {
  const recorded = Array.from({ length: 2_000 }, () => newRequestId(true));
  const counted = Array.from({ length: 2_000 }, () => newRequestId(false));
  t.ok(recorded.every((id) => /^hubreq_[0-9][0-9A-Za-z]{23}$/.test(id) && isRecordedRequestId(id)));
  t.ok(counted.every((id) => /^hubreq_[A-Za-z][0-9A-Za-z]{23}$/.test(id) && !isRecordedRequestId(id)));
  t.equal(new Set([...recorded, ...counted]).size, 4_000, 'still random');
  t.equal(new Set(recorded.map((id) => id[7])).size, 10, 'every digit is used');
  t.equal(new Set(counted.map((id) => id[7])).size, 52, 'every letter is used');
  for (const junk of ['hubreq_1', 'hubreq_1abc-', 'agt_0AAAAAAAAAAAAAAAAAAAAAAA', '']) t.notOk(isRecordedRequestId(junk), junk);
});
