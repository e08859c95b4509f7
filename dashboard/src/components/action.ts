import { useState } from 'preact/hooks';
import { ApiFailure } from '../api';

/**
 * A write in progress and how it ended: the API's refusal is kept whole, so each field shows its
 * own message and the rest shows above the form.
 */
export function useAction() {
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async <T>(work: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setFailure(null);
    try {
      return await work();
    } catch (thrown) {
      if (thrown instanceof ApiFailure) setFailure(thrown);
      else setFailure(new ApiFailure(0, 'network_error', String(thrown), {}));
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, failure, fieldError: (name: string) => failure?.fields[name] };
}

export type Action = ReturnType<typeof useAction>;

/** The values of a submitted form, trimmed; empty inputs left out (the API's defaults apply). */
export function formValues(form: HTMLFormElement): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, value] of new FormData(form)) {
    if (typeof value === 'string' && value.trim() !== '') values[name] = value.trim();
  }
  return values;
}

/**
 * A form's submit handler: sends its values (`send`), and when the API takes them clears the form
 * and reloads what it changed.
 */
export function onSubmitted(action: Action, send: (values: Record<string, string>) => Promise<unknown>, reload: () => void) {
  return async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    if (await action.run(() => send(formValues(form)))) {
      form.reset();
      reload();
    }
  };
}
