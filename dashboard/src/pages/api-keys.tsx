import { useState } from 'preact/hooks';
import { del, get, post } from '../api';
import { formValues, useAction } from '../components/action';
import { Field, FormError } from '../components/field';
import { useLoad } from '../components/load';
import { ShownOnce } from '../components/shown-once';
import { TableHead } from '../components/table-head';
import { when } from '../format';
import type { ApiKey } from '../types';

const SCOPES = ['admin:read', 'admin:write', 'usage:read', 'usage:write', 'page-views:write', 'agentify:convert'];

/** Settings › API keys (spec: keys "are created in the dashboard under Settings, API keys"). */
export function ApiKeys({ isAdmin }: { isAdmin: boolean }) {
  const keys = useLoad(() => get<{ apiKeys: ApiKey[] }>('/api-keys'), 'keys');
  const [created, setCreated] = useState<string | null>(null);
  const action = useAction();
  const revoking = useAction();

  const create = async (event: Event) => {
    const form = event.currentTarget as HTMLFormElement;
    event.preventDefault();
    const scopes = [...form.querySelectorAll<HTMLInputElement>('input[name=scope]:checked')].map((box) => box.value);
    const answer = await action.run(() => post<{ key: string }>('/api-keys', { name: formValues(form).name ?? '', scopes }));
    if (answer) {
      setCreated(answer.key);
      form.reset();
      keys.reload();
    }
  };
  const revoke = async (key: ApiKey) => {
    if (!confirm(`Revoke ${key.name}? Calls with it are refused from now on.`)) return;
    await revoking.run(() => del(`/api-keys/${key.id}`));
    keys.reload();
  };

  return (
    <section>
      <h1>API keys</h1>
      <p class="lead">Keys let your servers and CI call hub. Each belongs to the organization and carries only the scopes you give it.</p>
      {created && <ShownOnce label="Your new API key" value={created} onDone={() => setCreated(null)} />}
      <FormError action={revoking} />
      <table>
        <caption class="visually-hidden">Active API keys</caption>
        <TableHead columns={['Name', 'Key', 'Scopes', 'Last used', isAdmin && 'Actions']} />
        <tbody>
          {(keys.data?.apiKeys ?? []).map((key) => (
            <tr key={key.id}>
              <td>{key.name}</td>
              <td>
                <code>{key.keyPrefix}…</code>
              </td>
              <td>{key.scopes.join(', ')}</td>
              <td>{when(key.lastUsedAt)}</td>
              {isAdmin && (
                <td>
                  <button type="button" class="danger" onClick={() => revoke(key)} aria-label={`Revoke ${key.name}`}>
                    Revoke
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {isAdmin ? (
        <form onSubmit={create} class="card">
          <h2>Create a key</h2>
          <Field label="Name" name="name" required action={action} />
          <fieldset aria-describedby={action.fieldError('scopes') ? 'scopes-error' : undefined}>
            <legend>Scopes</legend>
            {SCOPES.map((scope) => (
              <label class="check" key={scope}>
                <input type="checkbox" name="scope" value={scope} /> {scope}
              </label>
            ))}
            {action.fieldError('scopes') && (
              <small id="scopes-error" class="field-error" role="alert">
                {action.fieldError('scopes')}
              </small>
            )}
          </fieldset>
          <FormError action={action} />
          <button type="submit" disabled={action.busy}>
            Create key
          </button>
        </form>
      ) : (
        <p class="hint">Only the organization's admins create and revoke keys.</p>
      )}
    </section>
  );
}
