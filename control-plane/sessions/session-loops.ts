import type { Logger } from 'pino';
import { microsToTokenUnits } from '../../shared/money.js';
import type { Db } from '../db/client.js';
import type { PaymentRail } from '../payments/rail.js';
import { claimVouchers } from './claim-vouchers.js';
import { followLostDeposits } from './follow-deposits.js';
import { followOpenTransaction } from './follow-transactions.js';
import { refundIdleChannels } from './refund-idle.js';
import type { SessionRail } from './session-rail.js';
import { settleClaimed } from './settle-claimed.js';
import { watchWithdrawals } from './watch-withdrawals.js';

/** The settings of sessions' claims and settlements (`HUB_SESSIONS_*`, docs/decisions.md#D-303). */
export type SessionSchedule = {
  /** How often what was charged is claimed. */
  claimIntervalMs: number;
  /** How often what was claimed is sent to sellers. */
  settleIntervalMs: number;
  /** A channel with this much charged and not claimed is claimed at once, not at the next interval. */
  claimAtMicros: bigint;
  /** How often payers' timed withdrawals are looked for on chain (docs/decisions.md#D-309). */
  withdrawWatchIntervalMs: number;
  /**
   * A channel with no voucher taken for this long gives what was not charged back to its payer
   * (docs/decisions.md#D-334); absent, hub refunds no idle channel.
   */
  idleRefundMs?: number;
};

/** How often idle channels are looked for: a tenth of the idle time, between a second and a minute. */
export function idleRefundIntervalMs(idleRefundMs: number): number {
  return Math.min(60_000, Math.max(1_000, Math.floor(idleRefundMs / 10)));
}

/** The size trigger of each rail's running loops: a channel's unclaimed amount, in token units, that calls a claim round. */
const sizeTriggers = new WeakMap<SessionRail, { atUnits: bigint; claimNow: () => void }>();

/**
 * Told after a voucher call is committed: a channel whose unclaimed amount reached the threshold,
 * or whose payer is withdrawing (any amount: docs/decisions.md#D-309), is claimed now.
 */
export function noteUnclaimed(rail: PaymentRail | undefined, unclaimed: bigint, withdrawing = false): void {
  const trigger = rail?.sessions && sizeTriggers.get(rail.sessions);
  if (trigger && unclaimed > 0n && (withdrawing || unclaimed >= trigger.atUnits)) trigger.claimNow();
}

/**
 * The control-plane's sessions worker: a claim round at start, every `claimIntervalMs` and when a channel
 * crosses `claimAtMicros`, a settle round every `settleIntervalMs`, and a watch of payers' timed
 * withdrawals at start and every `withdrawWatchIntervalMs`, which asks for a claim round at once
 * when a withdrawing channel has charges not claimed (and follows deposits whose outcome was lost,
 * follow-deposits.ts), and a refund of idle channels every `idleRefundIntervalMs(idleRefundMs)`
 * (refund-idle.ts); one round at a time (a round asked for while one runs waits for it; one of each
 * kind waits at most). Every claim, settle or refund round first follows the transaction a stopped
 * round (or a lost receipt) left open. Stopping waits for the round running.
 */
export function startSessionLoops(db: Db, rail: PaymentRail | undefined, logger: Logger, schedule: SessionSchedule): () => Promise<void> {
  const sessions = rail?.sessions;
  if (!rail || !sessions) return async () => {};
  let stopped = false;
  let queue: Promise<void> = Promise.resolve();
  const waiting = new Set<'claim' | 'settle' | 'watch' | 'refund'>();
  const round = (kind: 'claim' | 'settle' | 'watch' | 'refund') => {
    if (stopped || waiting.has(kind)) return;
    waiting.add(kind);
    queue = queue.then(async () => {
      waiting.delete(kind);
      if (stopped) return;
      try {
        if (kind === 'watch') {
          const { withdrawing, claimNow } = await watchWithdrawals(db, rail);
          const deposits = await followLostDeposits(db, rail);
          if (deposits.landed || deposits.failed) logger.info(deposits, 'followed session deposits whose outcome was lost');
          if (claimNow) {
            logger.info({ withdrawing }, 'payers are withdrawing from channels with charges not claimed: claiming now');
            round('claim');
          }
          return;
        }
        if (!(await followOpenTransaction(db, rail))) return;
        if (kind === 'claim') {
          const { channels, transaction } = await claimVouchers(db, rail);
          if (channels) logger.info({ channels, transaction }, 'claimed session vouchers');
        } else if (kind === 'refund') {
          const { refunded, amount, pending } = await refundIdleChannels(db, rail, schedule.idleRefundMs!);
          if (refunded || pending) logger.info({ refunded, amount: amount.toString(), pending }, 'refunded idle session channels');
        } else {
          const { receivers, amount } = await settleClaimed(db, rail);
          if (receivers) logger.info({ receivers, amount: amount.toString() }, 'settled claimed session funds');
        }
      } catch (err) {
        logger.warn({ err }, `session ${kind} round failed`);
      }
    });
  };
  const timers = [
    setInterval(() => round('claim'), schedule.claimIntervalMs),
    setInterval(() => round('settle'), schedule.settleIntervalMs),
    setInterval(() => round('watch'), schedule.withdrawWatchIntervalMs),
  ];
  if (schedule.idleRefundMs) timers.push(setInterval(() => round('refund'), idleRefundIntervalMs(schedule.idleRefundMs)));
  for (const timer of timers) timer.unref();
  sizeTriggers.set(sessions, { atUnits: microsToTokenUnits(schedule.claimAtMicros, rail.token.decimals), claimNow: () => round('claim') });
  // A control-plane that starts (after a crash, a deploy) claims at once what its predecessors
  // charged and did not claim, following first what one of them left open (docs/decisions.md#D-307),
  // after a look at the withdrawals under way (the claim then puts their channels first).
  round('watch');
  round('claim');
  return async () => {
    stopped = true;
    for (const timer of timers) clearInterval(timer);
    sizeTriggers.delete(sessions);
    await queue;
  };
}
