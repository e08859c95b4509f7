import t from 'tap';
import { INVITATION_LIFETIME_MS } from '../../../control-plane/accounts/invitations.js';
import { bootstrap } from '../../../control-plane/bootstrap.js';
import { hashToken } from '../../../shared/tokens.js';
import { startTestControlPlane } from '../../helpers/control-plane.js';
import { testProviders } from '../../helpers/database.js';
import { inviteMember } from '../../helpers/invitations.js';
import { managementClient } from '../../helpers/management.js';
import { startTestSmtpServer } from '../../helpers/smtp-server.js';

const PASSWORD = 'correct horse battery';
const MEMBERS = '/v1/organizations/current/members';
const INVITATIONS = '/v1/organizations/current/invitations';

for (const provider of testProviders()) {
  t.test(provider, async (t) => {
    const smtp = await startTestSmtpServer(t);
    const cp = await startTestControlPlane(t, provider, { HUB_SMTP_URL: smtp.url, HUB_CONTROL_PLANE_URL: 'https://hub.example' });
    const api = managementClient(cp.url);
    let n = 0;
    /** An organization whose admin signed in with a password of their own. */
    const organization = async (name: string) =>
      bootstrap(cp.db, { email: `admin${++n}@example.com`, organizationName: name, password: PASSWORD, another: true });

    const invite = (admin: { sessionToken: string }, email: string, role: 'admin' | 'member' = 'member', name?: string) =>
      inviteMember(api, smtp, admin.sessionToken, { email, role, ...(name ? { name } : {}) });
    const accept = (token: string | undefined, body: Record<string, unknown>) =>
      api.post(`/v1/invitations/${token}/accept`, undefined, body);
    const signIn = (email: string, password: string) => api.post('/v1/auth/sign-in', undefined, { email, password });

    t.test('invite, mail, accept, sign in', async (t) => {
      const acme = await organization('Acme');
      const { reply, mail, token } = await invite(acme, 'New.Person@Example.com', 'member', 'Nia');
      t.equal(reply.status, 201);
      t.match(reply.body.invitation, {
        id: /^inv_/,
        email: 'new.person@example.com',
        role: 'member',
        name: 'Nia',
        invitedById: acme.userId,
      });
      const lifetime = Date.parse(reply.body.invitation.expiresAt) - Date.now();
      t.ok(lifetime > INVITATION_LIFETIME_MS - 60_000 && lifetime <= INVITATION_LIFETIME_MS, 'the link works for 7 days');
      t.notOk(JSON.stringify(reply.body).includes('hubinv_'), 'the inviting admin never sees the link');

      t.same(mail?.envelopeTo, ['new.person@example.com']);
      t.match(mail?.subject, 'Acme');
      t.match(mail?.text, acme.email);
      t.match(mail?.text, `https://hub.example/v1/invitations/${token}`, 'the link, under HUB_CONTROL_PLANE_URL');
      t.ok(await cp.db.invitation.findUnique({ where: { tokenHash: hashToken(token!) } }), 'stored as a hash');

      t.same((await api.get(INVITATIONS, acme.sessionToken)).body.invitations, [reply.body.invitation], 'pending, listed apart');
      t.same(
        (await api.get(MEMBERS, acme.sessionToken)).body.members.map((m: { email: string }) => m.email),
        [acme.email],
        'not a member yet',
      );

      t.match(await api.get(`/v1/invitations/${token}`), {
        status: 200,
        body: { invitation: { organizationName: 'Acme', email: 'new.person@example.com', role: 'member', existingAccount: false } },
      });
      t.match(await accept(token, { password: 'short' }), { status: 400, body: { error: /^password: / } });

      const accepted = await accept(token, { password: PASSWORD });
      t.match(accepted, {
        status: 200,
        body: {
          sessionToken: /^hubses_/,
          user: { email: 'new.person@example.com', name: 'Nia' },
          currentOrganizationId: acme.organizationId,
        },
      });
      t.match(await api.get('/v1/organizations/current', accepted.body.sessionToken), {
        body: { organization: { name: 'Acme', role: 'member' } },
      });
      t.equal((await signIn('new.person@example.com', PASSWORD)).status, 200, 'their own password signs them in');
      t.same((await api.get(INVITATIONS, acme.sessionToken)).body.invitations, [], 'no longer pending');
      t.match((await api.get(MEMBERS, acme.sessionToken)).body.members, [
        { email: acme.email, role: 'admin' },
        { email: 'new.person@example.com', role: 'member' },
      ]);

      t.match(await accept(token, { password: PASSWORD }), { status: 404, body: { error: 'invitation_not_found' } }, 'the link works once');
      t.match(await api.get(`/v1/invitations/${token}`), { status: 404, body: { error: 'invitation_not_found' } });
      t.match(await invite(acme, 'new.person@example.com'), { reply: { status: 409, body: { error: 'duplicate_member' } } });
    });

    t.test('adding a member with a password is refused', async (t) => {
      const acme = await organization('Acme');
      const since = smtp.received.length;
      t.match(await api.post(MEMBERS, acme.sessionToken, { email: 'chosen@example.com', role: 'member', password: PASSWORD }), {
        status: 400,
        body: { error: 'invalid_request', reason: /own password/ },
      });
      t.same((await api.get(INVITATIONS, acme.sessionToken)).body.invitations, []);
      t.equal(smtp.received.length, since, 'nothing mailed');
      t.match(await signIn('chosen@example.com', PASSWORD), { status: 401 });
    });

    t.test('the takeover: an admin of one organization cannot sign in as a member of another', async (t) => {
      const a = await organization('A');
      const b = await organization('B');
      const victim = 'victim@example.com';
      const fromA = await invite(a, victim, 'admin');
      t.equal(fromA.reply.status, 201, "A's admin names the address first");
      t.match(await api.post(MEMBERS, a.sessionToken, { email: victim, role: 'admin', password: 'attacker chosen' }), { status: 400 });

      const fromB = await invite(b, victim, 'admin');
      t.equal(
        (await accept(fromB.token, { password: 'the victim’s own password' })).status,
        200,
        'B’s member joins with a password of their own',
      );
      t.match(await signIn(victim, 'attacker chosen'), { status: 401, body: { error: 'invalid_credentials' } });

      t.match(await api.get(`/v1/invitations/${fromA.token}`), { body: { invitation: { existingAccount: true } } });
      t.match(
        await accept(fromA.token, { password: 'attacker chosen' }),
        { status: 401, body: { error: 'invalid_credentials' } },
        "A's link, held by someone who is not the account's owner, does not set or learn the password",
      );
      t.equal((await signIn(victim, 'the victim’s own password')).status, 200, 'the password is unchanged');
      const orgs = (await api.get('/v1/organizations', (await signIn(victim, 'the victim’s own password')).body.sessionToken)).body;
      t.same(
        orgs.organizations.map((o: { name: string }) => o.name),
        ['B'],
        'not in A',
      );
    });

    t.test('an existing user joins another organization only by accepting, with their own password', async (t) => {
      const home = await organization('Home');
      const other = await organization('Other');
      const { token } = await invite(other, home.email, 'member');
      const orgsOf = async () =>
        (await api.get('/v1/organizations', home.sessionToken)).body.organizations.map((o: { name: string }) => o.name);
      t.same(await orgsOf(), ['Home'], 'inviting adds nobody');
      t.match(await api.get(`/v1/invitations/${token}`), { body: { invitation: { existingAccount: true, organizationName: 'Other' } } });
      t.match(await accept(token, { password: 'a new password for them' }), { status: 401, body: { error: 'invalid_credentials' } });
      t.same(await orgsOf(), ['Home']);

      const accepted = await accept(token, { password: PASSWORD, name: 'Ignored' });
      t.match(accepted, { status: 200, body: { user: { id: home.userId, name: null }, currentOrganizationId: other.organizationId } });
      t.same(await orgsOf(), ['Home', 'Other']);
      t.equal((await signIn(home.email, PASSWORD)).status, 200, 'the password is the one they had');
      t.equal((await signIn(home.email, 'a new password for them')).status, 401);
    });

    t.test('two invitations of one new address accepted at once make one account, never a 500', async (t) => {
      const first = await organization('First');
      const second = await organization('Second');
      const email = 'twice@example.com';
      const links = [(await invite(first, email)).token, (await invite(second, email)).token];
      const answers = await Promise.all(links.map((token) => accept(token, { password: PASSWORD })));
      t.ok(
        answers.every((a) => a.status === 200 || (a.status === 401 && a.body.error === 'invalid_credentials')),
        `each joins, or meets the account the other made: ${answers.map((a) => a.status)}`,
      );
      t.ok(
        answers.some((a) => a.status === 200),
        'one joins',
      );
      t.equal(await cp.db.user.count({ where: { email } }), 1, 'one account');
      for (const [i, answer] of answers.entries()) {
        if (answer.status === 200) continue;
        t.equal((await accept(links[i], { password: PASSWORD })).status, 200, 'the other link is still open, for the account’s password');
      }
    });

    t.test('wrong, expired, revoked and replaced links', async (t) => {
      const acme = await organization('Acme');
      const wrong = `hubinv_${'x'.repeat(40)}`;
      t.match(await api.get(`/v1/invitations/${wrong}`), { status: 404, body: { error: 'invitation_not_found' } });
      t.match(await accept(wrong, { password: PASSWORD }), { status: 404, body: { error: 'invitation_not_found' } });

      const first = await invite(acme, 'late@example.com');
      const again = await invite(acme, 'late@example.com', 'admin');
      t.equal(again.reply.body.invitation.id, first.reply.body.invitation.id, 'inviting again re-sends the one invitation');
      t.equal(again.reply.body.invitation.role, 'admin');
      t.not(again.token, first.token, 'with a new link');
      t.match(
        await accept(first.token, { password: PASSWORD }),
        { status: 404, body: { error: 'invitation_not_found' } },
        'the old link is dead',
      );

      // Seven days on (the expiry moved back, as waiting would leave it):
      await cp.db.invitation.update({ where: { id: again.reply.body.invitation.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
      t.match(await api.get(`/v1/invitations/${again.token}`), { status: 410, body: { error: 'invitation_expired' } });
      t.match(await accept(again.token, { password: PASSWORD }), { status: 410, body: { error: 'invitation_expired' } });
      t.match(await signIn('late@example.com', PASSWORD), { status: 401 }, 'no account was made');

      const revoked = await invite(acme, 'revoked@example.com');
      const id = revoked.reply.body.invitation.id;
      const member = await organization('Elsewhere');
      t.match(
        await api.delete(`${INVITATIONS}/${id}`, member.sessionToken),
        { status: 404, body: { error: 'invitation_not_found' } },
        "another organization's",
      );
      t.equal((await api.delete(`${INVITATIONS}/${id}`, acme.sessionToken)).status, 204);
      t.match(await api.get(`/v1/invitations/${revoked.token}`), { status: 404, body: { error: 'invitation_not_found' } });
      t.match(await accept(revoked.token, { password: PASSWORD }), { status: 404 });
      t.match(await api.delete(`${INVITATIONS}/${id}`, acme.sessionToken), { status: 404, body: { error: 'invitation_not_found' } });
    });

    t.test('members may list invitations; only admins invite and revoke', async (t) => {
      const acme = await organization('Acme');
      const { token } = await invite(acme, 'plain@example.com', 'member');
      const member = (await accept(token, { password: PASSWORD })).body.sessionToken;
      t.equal((await api.get(INVITATIONS, member)).status, 200);
      t.match(await api.post(MEMBERS, member, { email: 'x@example.com', role: 'member' }), {
        status: 403,
        body: { error: 'organization_permission_required' },
      });
    });
  });
}
