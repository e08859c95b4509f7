import pino from 'pino';
import t from 'tap';
import type { ControlPlaneClient } from '../../../proxy/control-plane-client.js';
import { RequestRecorder } from '../../../proxy/paid-call/request-recorder.js';
import type { RequestBatch } from '../../../shared/contract.js';
import { newId } from '../../../shared/ids.js';

// The recorder against a stand-in for the control-plane's recordRequests procedure, so that a
// flush can be made to fail; the real round trip is covered in faults.test.ts.
function recorderWith(store: (batch: RequestBatch) => Promise<void>) {
  const batches: RequestBatch[] = [];
  const controlPlane = {
    call: async (name: string, batch: RequestBatch) => {
      if (name !== 'recordRequests') throw new Error(`unexpected call ${name}`);
      await store(batch);
      batches.push(batch);
      return batch.created.length + batch.completed.length + batch.tallies.length;
    },
  } as unknown as ControlPlaneClient;
  return { recorder: new RequestRecorder(controlPlane, pino({ level: 'silent' })), batches };
}

t.test('anonymous calls become one tally per seller, minute, sandbox flag and outcome', async (t) => {
  const { recorder, batches } = recorderWith(async () => {});
  const [a, b] = [newId('seller'), newId('seller')];
  for (let i = 0; i < 500; i++) recorder.tally(a, false, 'delivered');
  for (let i = 0; i < 7; i++) recorder.tally(a, false, 'failed');
  recorder.tally(a, true, 'delivered');
  recorder.tally(b, false, 'delivered');
  t.equal(recorder.pending(), 4, 'four keys held, not 509 entries');
  await recorder.drain();
  t.equal(recorder.pending(), 0);
  t.equal(batches.length, 1, 'one call for the lot');
  const tallies = batches[0]!.tallies.map((x) => [x.sellerId, x.sandbox, x.lifecycle, x.count]);
  t.same(
    new Set(tallies.map(String)),
    new Set(
      [
        [a, false, 'delivered', 500],
        [a, false, 'failed', 7],
        [a, true, 'delivered', 1],
        [b, false, 'delivered', 1],
      ].map(String),
    ),
  );
  const minute = Date.parse(batches[0]!.tallies[0]!.minute);
  t.equal(minute % 60_000, 0, 'counted in whole UTC minutes');
  t.ok(Date.now() - minute < 120_000);
});

t.test('counts survive failed flushes and go out with the next one; draining does not wait forever', async (t) => {
  let failures = 2;
  const { recorder, batches } = recorderWith(async () => {
    if (failures-- > 0) throw new Error('control-plane away');
  });
  const sellerId = newId('seller');
  for (let i = 0; i < 3; i++) recorder.tally(sellerId, false, 'delivered');
  await recorder.drain();
  t.equal(batches.length, 0, 'both tries of the drain failed, and it gave up');
  t.equal(recorder.pending(), 1, 'the counts are held again');
  recorder.tally(sellerId, false, 'delivered');
  await recorder.drain();
  t.equal(batches.length, 1);
  t.same(
    batches[0]!.tallies.map((x) => x.count),
    [4],
    'nothing lost, nothing counted twice',
  );
});

t.test('an awaited record is rejected when its batch cannot be stored, and not retried', async (t) => {
  const { recorder } = recorderWith(async () => {
    throw new Error('control-plane away');
  });
  const record = {
    id: newId('request'),
    sellerId: newId('seller'),
    method: 'GET',
    path: '/',
    sandbox: false,
    lifecycle: 'forwarded' as const,
    createdAt: new Date().toISOString(),
  };
  await t.rejects(recorder.create(record, { urgent: true }), /control-plane away/);
  t.equal(recorder.pending(), 0);
});
