import t from 'tap';
import { withdrawalDue } from '../../../control-plane/sessions/watch-withdrawals.js';

// The scheme's check on a voucher: a channel whose timed withdrawal can be finalized takes no more (D-309).
t.test('a voucher is refused once the channel’s withdrawal can be finalized, not before', async (t) => {
  const channel = { withdrawRequestedAt: 1_000_000, withdrawDelay: 86_400 };
  t.notOk(withdrawalDue({ withdrawRequestedAt: 0, withdrawDelay: 86_400 }, 2_000_000), 'no withdrawal under way');
  t.notOk(withdrawalDue(channel, 1_000_000), 'just initiated');
  t.notOk(withdrawalDue(channel, 1_086_399), 'a second before its deadline');
  t.ok(withdrawalDue(channel, 1_086_400), 'at its deadline');
  t.ok(withdrawalDue(channel, 1_200_000), 'past it');
});
