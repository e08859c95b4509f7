import { useCallback, useEffect, useState } from 'preact/hooks';

/** Data read from the API for a page: reloaded when `key` changes or `reload` is called. */
export function useLoad<T>(load: () => Promise<T>, key: string) {
  const [state, setState] = useState<{ data?: T; error?: string }>({});
  const [round, setRound] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` stands for what `load` reads.
  useEffect(() => {
    let current = true;
    load().then(
      (data) => current && setState({ data }),
      (error: unknown) => current && setState({ error: error instanceof Error ? error.message : String(error) }),
    );
    return () => {
      current = false;
    };
  }, [key, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { ...state, reload };
}
