import { api, del, get, post } from '../api';
import { onSubmitted, useAction } from '../components/action';
import { Choice, Field, FormError } from '../components/field';
import { useLoad } from '../components/load';
import { TableHead } from '../components/table-head';
import type { Member } from '../types';

/** Settings › Members: who belongs to the organization and as what; admins invite and change roles. */
export function Members({ isAdmin }: { isAdmin: boolean }) {
  const members = useLoad(() => get<{ members: Member[] }>('/organizations/current/members'), 'members');
  const invite = useAction();
  const change = useAction();

  const submit = onSubmitted(invite, (values) => post('/organizations/current/members', values), members.reload);
  const setRole = async (member: Member, role: string) => {
    await change.run(() => api('PATCH', `/organizations/current/members/${member.id}`, { role }));
    members.reload();
  };
  const remove = async (member: Member) => {
    if (!confirm(`Remove ${member.email} from the organization?`)) return;
    await change.run(() => del(`/organizations/current/members/${member.id}`));
    members.reload();
  };

  return (
    <section>
      <h1>Members</h1>
      <FormError action={change} />
      <table>
        <caption class="visually-hidden">Members of the organization</caption>
        <TableHead columns={['Email', 'Role', isAdmin && 'Actions']} />
        <tbody>
          {(members.data?.members ?? []).map((m) => (
            <tr key={m.id}>
              <td>{m.email}</td>
              <td>
                {isAdmin ? (
                  <select aria-label={`Role of ${m.email}`} value={m.role} onChange={(e) => setRole(m, e.currentTarget.value)}>
                    <option value="admin">admin</option>
                    <option value="member">member</option>
                  </select>
                ) : (
                  m.role
                )}
              </td>
              {isAdmin && (
                <td>
                  <button type="button" class="danger" onClick={() => remove(m)} aria-label={`Remove ${m.email}`}>
                    Remove
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {isAdmin && (
        <form onSubmit={submit} class="card">
          <h2>Invite a member</h2>
          <Field label="Email" name="email" type="email" required action={invite} />
          <Choice label="Role" name="role" action={invite}>
            <option value="member">member</option>
            <option value="admin">admin</option>
          </Choice>
          <FormError action={invite} />
          <button type="submit" disabled={invite.busy}>
            Send invitation
          </button>
        </form>
      )}
    </section>
  );
}
