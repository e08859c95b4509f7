/**
 * Runs tasks one after another, each once the one before it has ended (settled or failed), in the
 * order they were handed in. For sends that must reach their peer in order (a settler's
 * transactions, by nonce) while whatever follows each send still runs side by side.
 */
export function turns(): <T>(task: () => Promise<T>) => Promise<T> {
  let last: Promise<unknown> = Promise.resolve();
  return (task) => {
    const turn = last.then(task, task);
    last = turn.catch(() => undefined);
    return turn;
  };
}
