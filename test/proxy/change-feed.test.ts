import t from 'tap';
import { ChangeFeed } from '../../proxy/change-feed.js';

/** A feed over looks the test answers by hand, in the order they were asked. */
function feed() {
  const asked: { since: string | null; answer: (ids: string[]) => void; fail: (err: Error) => void }[] = [];
  const changed: string[][] = [];
  let n = 0;
  const changes = new ChangeFeed(
    (since) => new Promise((resolve, reject) => asked.push({ since, answer: (ids) => resolve({ now: `mark-${++n}`, ids }), fail: reject })),
    (ids) => changed.push(ids),
    { pollMs: 60_000, what: 'test' },
  );
  return { changes, asked, changed };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

t.test('catchUp looks at once, and resolves once what it found is handed on', async (t) => {
  const { changes, asked, changed } = feed();
  const first = changes.catchUp();
  await settled();
  t.equal(asked.length, 1);
  t.equal(asked[0]!.since, null, 'the first look sets the mark');
  asked[0]!.answer([]);
  await first;
  const second = changes.catchUp();
  await settled();
  t.equal(asked[1]!.since, 'mark-1', 'from the mark');
  let done = false;
  void second.then(() => (done = true));
  await settled();
  t.notOk(done, 'not before the control-plane answered');
  asked[1]!.answer(['s1', 's2']);
  await second;
  t.same(changed, [['s1', 's2']]);
});

t.test('a look under way when catchUp is called may have asked too early: catchUp asks again after it', async (t) => {
  const { changes, asked, changed } = feed();
  changes.start();
  await new Promise((resolve) => setTimeout(resolve, 0));
  t.equal(asked.length, 1, 'the poll is under way');
  const caught = changes.catchUp();
  await settled();
  t.equal(asked.length, 1, 'one look at a time');
  asked[0]!.answer([]);
  await settled();
  t.equal(asked.length, 2, 'then a look of its own');
  t.equal(asked[1]!.since, 'mark-1');
  asked[1]!.answer(['s3']);
  await caught;
  t.same(changed, [['s3']]);
  changes.stop();
});

t.test('catchUp rejects when the look fails; the next look starts from the same mark', async (t) => {
  const { changes, asked } = feed();
  const first = changes.catchUp();
  await settled();
  asked[0]!.answer([]);
  await first;
  const failing = changes.catchUp();
  await settled();
  asked[1]!.fail(new Error('control-plane unreachable'));
  await t.rejects(failing, /control-plane unreachable/);
  const again = changes.catchUp();
  await settled();
  t.equal(asked[2]!.since, 'mark-1');
  asked[2]!.answer([]);
  await again;
});
