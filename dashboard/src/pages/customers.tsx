import { get, post } from '../api';
import { useAction } from '../components/action';
import { FormError } from '../components/field';
import { useLoad } from '../components/load';
import { TableHead } from '../components/table-head';
import { usd, when } from '../format';
import type { Account, AccountWrite, Seller } from '../types';

/** Customers and deliveries: buyer accounts with their state, and the account writes sent to the seller. */
export function Customers({ seller }: { seller: Seller }) {
  const accounts = useLoad(() => get<{ accounts: Account[] }>(`/accounts?sellerId=${seller.id}`), seller.id);
  const writes = useLoad(() => get<{ accountWrites: AccountWrite[] }>(`/account-writes?sellerId=${seller.id}`), seller.id);
  const action = useAction();
  const resend = async (write: AccountWrite) => {
    await action.run(() => post(`/account-writes/${write.id}/resend`));
    writes.reload();
  };
  return (
    <section>
      <h1>Customers · {seller.name}</h1>
      <h2>Accounts</h2>
      <table>
        <TableHead columns={['Account', 'Plan', 'Status', 'Set up at the seller', 'Balance', 'Opened']} />
        <tbody>
          {(accounts.data?.accounts ?? []).map((a) => (
            <tr key={a.accessId}>
              <td>
                <code>{a.accessId}</code>
              </td>
              <td>{a.plan.name}</td>
              <td>{a.status}</td>
              <td>{a.provisioningState}</td>
              <td>{a.balanceUsd === null ? '—' : usd(a.balanceUsd)}</td>
              <td>{when(a.createdAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {accounts.data?.accounts.length === 0 && <p class="hint">No accounts yet: agents open one by buying a plan.</p>}
      <h2>Account-write deliveries</h2>
      <FormError action={action} />
      <table data-testid="deliveries">
        <TableHead columns={['Write', 'Status', 'Attempts', 'Last error', 'Actions']} />
        <tbody>
          {(writes.data?.accountWrites ?? []).map((w) => (
            <tr key={w.id}>
              <td>
                <code>{w.accessId}</code> v{w.stateVersion}
              </td>
              <td>
                <span class={`badge ${w.status}`}>{w.status}</span>
              </td>
              <td>{w.attempts}</td>
              <td>{w.lastError ?? '—'}</td>
              <td>
                {w.status === 'failed' && (
                  <button type="button" onClick={() => resend(w)} aria-label={`Re-send write ${w.stateVersion} of ${w.accessId}`}>
                    Re-send
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="hint">Card payments and refunds will show here once hub takes cards.</p>
    </section>
  );
}
