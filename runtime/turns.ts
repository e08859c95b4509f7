import { within } from './within.js';

/**
 * Runs tasks one after another, each once the one before it has ended (settled or failed), in the
 * order they were handed in. For sends that must reach their peer in order (a settler's
 * transactions, by nonce) while whatever follows each send still runs side by side. With
 * `maxWaitMs`, a task waits that long at most for the one before it: a peer that stops answering
 * holds each later task up by that much, not by every earlier task's whole timeout in a row.
 */
export function turns({ maxWaitMs }: { maxWaitMs?: number } = {}): <T>(task: () => Promise<T>) => Promise<T> {
  let last: Promise<unknown> = Promise.resolve();
  return (task) => {
    const before = maxWaitMs === undefined ? last : within(last, maxWaitMs);
    const turn = before.then(task, task);
    last = turn.catch(() => undefined);
    return turn;
  };
}
