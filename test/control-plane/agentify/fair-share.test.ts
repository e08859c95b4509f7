import t from 'tap';
import { FairShare } from '../../../control-plane/agentify/fair-share.js';

// Slots shared between keys: a cap per key, waiting keys served round-robin, bounded lines.

/** A task that runs until `finish(name)`, noting when it starts. */
function tasks() {
  const started: string[] = [];
  const ends = new Map<string, () => void>();
  return {
    started,
    task: (name: string) => () => {
      started.push(name);
      return new Promise<string>((resolve) => ends.set(name, () => resolve(name)));
    },
    finish: async (name: string) => {
      ends.get(name)!();
      // Lets the slot's release and the next task's start run.
      for (let i = 0; i < 5; i++) await Promise.resolve();
    },
  };
}

t.test('one key never holds more than its share, and waiting keys take turns', async (t) => {
  const share = new FairShare({ slots: 2, perKey: 1, waitingPerKey: 10, waitingInAll: 10 });
  const { started, task, finish } = tasks();
  const runs = ['a1', 'a2', 'a3', 'b1', 'b2', 'c1'].map((name) => share.run(name[0]!, task(name)));
  t.same(started, ['a1', 'b1'], 'a second slot is left to another key while a has pages waiting');
  await finish('a1');
  t.same(started, ['a1', 'b1', 'c1'], 'c, never served, goes before a’s second page');
  await finish('b1');
  t.same(started.slice(3), ['a2'], 'then a, served longer ago than b');
  await finish('c1');
  t.same(started.slice(4), ['b2']);
  await finish('a2');
  t.same(started.slice(5), ['a3']);
  await finish('b2');
  await finish('a3');
  t.same(await Promise.all(runs), ['a1', 'a2', 'a3', 'b1', 'b2', 'c1']);
});

t.test('a failing task frees its slot', async (t) => {
  const share = new FairShare({ slots: 1, perKey: 1, waitingPerKey: 10, waitingInAll: 10 });
  const failing = share.run('a', () => Promise.reject(new Error('boom')));
  const next = share.run('b', async () => 'b');
  await t.rejects(failing, /boom/);
  t.equal(await next, 'b');
});

t.test('refusal names the full line', async (t) => {
  const share = new FairShare({ slots: 1, perKey: 1, waitingPerKey: 1, waitingInAll: 2 });
  const { task, finish } = tasks();
  t.equal(share.refusal('a'), undefined);
  const a1 = share.run('a', task('a1'));
  t.equal(share.refusal('a'), undefined, 'a may wait one');
  const a2 = share.run('a', task('a2'));
  t.equal(share.refusal('a'), 'key');
  t.equal(share.refusal('b'), undefined);
  const b1 = share.run('b', task('b1'));
  t.equal(share.refusal('c'), 'all');
  await finish('a1');
  await finish('b1');
  await finish('a2');
  await Promise.all([a1, a2, b1]);
  t.equal(share.refusal('c'), undefined, 'lines empty again');
});
