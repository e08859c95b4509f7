import { useState } from 'preact/hooks';
import { get, post, put } from '../api';
import { useAction } from '../components/action';
import { FormError } from '../components/field';
import { useLoad } from '../components/load';
import { ShownOnce } from '../components/shown-once';
import { when } from '../format';
import type { Seller, SigningSecret, StatefulAccess } from '../types';

/** A seller's signing secrets (create, rotate, retire; each value shown once) and its stateful access. */
export function SellerKeys({ seller }: { seller: Seller }) {
  const base = `/sellers/${seller.id}`;
  const secrets = useLoad(() => get<{ signingSecrets: SigningSecret[] }>(`${base}/signing-secrets`), seller.id);
  const flags = useLoad(() => get<StatefulAccess>(`${base}/stateful-access`), seller.id);
  const stateful = useLoad(() => get<{ stateful: boolean }>(`${base}/stateful-access?variant=later`), seller.id);
  const [shown, setShown] = useState<string | null>(null);
  const action = useAction();

  const issue = async (path: string) => {
    const answer = await action.run(() => post<{ signingSecret: SigningSecret; secret: string }>(path));
    if (answer) setShown(`${answer.signingSecret.id}=${answer.secret}`);
    secrets.reload();
  };
  const retire = async (secret: SigningSecret) => {
    await action.run(() => post(`${base}/signing-secrets/${secret.id}/retire`));
    secrets.reload();
  };
  const setStateful = async (value: boolean) => {
    await action.run(() => put(`${base}/stateful-access`, { stateful: value }));
    stateful.reload();
  };

  return (
    <div class="card">
      <h2>Signing secrets</h2>
      <p class="hint">Your API checks hub's signature on every request with these (kid=secret).</p>
      {shown && <ShownOnce label="New signing secret" value={shown} onDone={() => setShown(null)} />}
      <FormError action={action} />
      <ul class="plain">
        {(secrets.data?.signingSecrets ?? []).map((secret) => (
          <li key={secret.id}>
            <code>{secret.id}</code> <span class={`badge ${secret.status}`}>{secret.status}</span> {when(secret.createdAt)}{' '}
            {secret.status === 'active' && (
              <button type="button" class="secondary" onClick={() => retire(secret)} aria-label={`Retire ${secret.id}`}>
                Retire
              </button>
            )}
          </li>
        ))}
      </ul>
      <div class="row">
        <button type="button" onClick={() => issue(`${base}/signing-secrets`)}>
          Create secret
        </button>
        <button type="button" class="secondary" onClick={() => issue(`${base}/signing-secrets/rotate`)}>
          Rotate
        </button>
      </div>
      <h2>Stateful access</h2>
      {flags.data && stateful.data && (
        <div>
          <label class="check">
            <input type="checkbox" checked={stateful.data.stateful} onChange={(e) => setStateful(e.currentTarget.checked)} /> Stateful: take
            signed account writes at <code>{flags.data.accessEndpointUrl}</code>
          </label>
          <p class="hint">
            Sales {flags.data.salesEnabled ? 'open' : 'closed'}, servicing {flags.data.servicingEnabled ? 'open' : 'closed'} (the operator's
            switches: <code>hub seller stateful-access</code>).
          </p>
        </div>
      )}
    </div>
  );
}
