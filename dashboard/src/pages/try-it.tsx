import { useState } from 'preact/hooks';
import { post } from '../api';
import { useAction } from '../components/action';
import type { TryAnswer } from '../types';

/**
 * "Try it": the answer an agent without credentials gets at a path of the pay URL, asked by hub
 * (`POST /v1/sellers/{id}/try`): its status, the x402 challenge decoded, and MPP's header.
 */
export function TryIt({ sellerId }: { sellerId: string }) {
  const [path, setPath] = useState('/');
  const [answer, setAnswer] = useState<TryAnswer | null>(null);
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    const tried = await action.run(() => post<{ answer: TryAnswer }>(`/sellers/${sellerId}/try`, { path }));
    if (tried) setAnswer(tried.answer);
  };
  return (
    <div class="card">
      <h2>Try it</h2>
      <form onSubmit={submit} class="inline-form">
        <label for="try-path">Path on the pay URL</label>
        <input
          id="try-path"
          name="path"
          value={path}
          onInput={(e) => setPath((e.target as HTMLInputElement).value)}
          aria-invalid={action.fieldError('path') ? 'true' : undefined}
          aria-describedby={action.fieldError('path') ? 'try-path-error' : undefined}
        />
        <button type="submit" disabled={action.busy}>
          Call it as an agent
        </button>
      </form>
      {action.fieldError('path') && (
        <p id="try-path-error" class="field-error">
          {action.fieldError('path')}
        </p>
      )}
      {action.failure && !action.fieldError('path') && <p class="form-error">{action.failure.message}</p>}
      {answer && (
        <div data-testid="try-answer">
          <p>
            Answered <strong data-testid="try-status">{answer.status}</strong>
            {answer.headers['www-authenticate'] ? ', with an MPP challenge in WWW-Authenticate' : ''}
          </p>
          {answer.paymentRequired !== null && (
            <>
              <h3>payment-required (x402, decoded)</h3>
              {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a region that scrolls must be reachable by keyboard (axe: scrollable-region-focusable). */}
              <pre class="doc" tabIndex={0}>
                {JSON.stringify(answer.paymentRequired, null, 2)}
              </pre>
            </>
          )}
          <h3>Body</h3>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a region that scrolls must be reachable by keyboard (axe: scrollable-region-focusable). */}
          <pre class="doc" tabIndex={0}>
            {answer.body}
          </pre>
        </div>
      )}
    </div>
  );
}
