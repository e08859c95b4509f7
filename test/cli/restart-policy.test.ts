import t from 'tap';
import { describeRestart, nextRestart, restartPolicy } from '../../cli/restart-policy.js';
import { loadConfig } from '../../shared/config.js';

const policy = restartPolicy(loadConfig({}));

t.test('by default a run of 10 s is a while; a crash loop waits 0.5 s, doubling to 30 s', async (t) => {
  t.same(policy, { healthyAfterMs: 10_000, firstBackoffMs: 500, maxBackoffMs: 30_000 });
  t.equal(restartPolicy(loadConfig({ HUB_RESTART_HEALTHY_AFTER_MS: '250' })).healthyAfterMs, 250, 'HUB_RESTART_HEALTHY_AFTER_MS');
  t.throws(() => loadConfig({ HUB_RESTART_HEALTHY_AFTER_MS: '0' }), /^HUB_RESTART_HEALTHY_AFTER_MS must be at least 1$/);
});

t.test('a process that ran a while is restarted at once, however often it crashes', async (t) => {
  t.same(nextRestart(10_000, 0, policy), { delayMs: 0, crashLoop: 0 });
  t.same(nextRestart(12_000, 0, policy), { delayMs: 0, crashLoop: 0 });
  // A request that crashes the proxy every 12 s: down for no more than its own start-up each time.
  let crashLoop = 0;
  for (let i = 0; i < 50; i++) {
    const restart = nextRestart(12_000, crashLoop, policy);
    t.equal(restart.delayMs, 0);
    crashLoop = restart.crashLoop;
  }
  t.same(nextRestart(3_600_000, 7, policy), { delayMs: 0, crashLoop: 0 }, 'and a run of a while ends a crash loop');
});

t.test('only crashes soon after start-up back off, doubling up to the cap', async (t) => {
  const waits: number[] = [];
  let crashLoop = 0;
  for (let i = 0; i < 9; i++) {
    const restart = nextRestart(1_200, crashLoop, policy);
    waits.push(restart.delayMs);
    crashLoop = restart.crashLoop;
  }
  t.same(waits, [500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
  t.equal(crashLoop, 9);
  t.same(nextRestart(9_999, 0, policy), { delayMs: 500, crashLoop: 1 }, 'just short of a while is soon');
});

t.test('each restart says how the process ended, how long it ran, and the wait chosen', async (t) => {
  t.equal(
    describeRestart('proxy', { code: null, signal: 'SIGKILL' }, 754_321, { delayMs: 0, crashLoop: 0 }, policy),
    'hub: proxy exited (signal SIGKILL) after 754.3 s; it had run 10 s or more: restarting at once',
  );
  t.equal(
    describeRestart('control-plane', { code: 1, signal: null }, 1_234, { delayMs: 2_000, crashLoop: 3 }, policy),
    'hub: control-plane exited (exit code 1) after 1.2 s; exit 3 in a row within 10 s of starting: restarting in 2000 ms',
  );
});
