import t from 'tap';
import { bootstrap } from '../../../control-plane/bootstrap.js';
import { openDatabase } from '../../../control-plane/db/client.js';
import { startTestControlPlane } from '../../helpers/control-plane.js';
import { addMember } from '../../helpers/invitations.js';
import { managementClient } from '../../helpers/management.js';
import { startTestSmtpServer } from '../../helpers/smtp-server.js';

// Two admins removing (or demoting) each other at once must leave one: each change counts the
// other admins, and on PostgreSQL a count does not wait for a delete that is not committed yet.
t.test(
  'two admins removing each other at once leave one admin',
  { skip: !process.env.HUB_TEST_PG_URL && 'HUB_TEST_PG_URL is not set' },
  async (t) => {
    const smtp = await startTestSmtpServer(t);
    const cp = await startTestControlPlane(t, 'postgresql', { HUB_SMTP_URL: smtp.url });
    const api = managementClient(cp.url);
    const password = 'correct horse battery';
    const first = await bootstrap(cp.db, { email: 'first@example.com', organizationName: 'Acme', password });
    const second = await addMember(api, smtp, first.sessionToken, { email: 'second@example.com', role: 'admin', password });
    const members = (await api.get('/v1/organizations/current/members', first.sessionToken)).body.members as {
      id: string;
      email: string;
    }[];
    const idOf = (email: string) => members.find((m) => m.email === email)!.id;

    // Another connection holds both memberships, so both changes get as far as they can and wait;
    // released together, they race for real.
    const holder = await openDatabase(cp.config.database, { poolSize: 1 });
    t.teardown(() => holder.close());
    const watcher = await openDatabase(cp.config.database, { poolSize: 1 });
    t.teardown(() => watcher.close());
    const waiting = async () => {
      const [row] = await watcher.db.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
      return row!.n;
    };

    for (const [label, change] of [
      ['removals', (token: string, id: string) => api.delete(`/v1/organizations/current/members/${id}`, token)],
      ['demotions', (token: string, id: string) => api.patch(`/v1/organizations/current/members/${id}`, token, { role: 'member' })],
    ] as const) {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const held = holder.db.$transaction(
        async (tx) => {
          await tx.$queryRaw`SELECT "id" FROM "Membership" WHERE "organizationId" = ${first.organizationId} FOR UPDATE`;
          await released;
        },
        { timeout: 20_000 },
      );
      const changes = [change(first.sessionToken, idOf('second@example.com')), change(second, idOf('first@example.com'))];
      for (let tries = 0; (await waiting()) < 2; tries++) {
        if (tries > 300) throw new Error('the changes never waited');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      release();
      await held;
      const statuses = (await Promise.all(changes)).map((res) => res.status).sort();
      t.same(statuses, [label === 'removals' ? 204 : 200, 409], `${label}: one goes through, the other is last_admin`);
      const admins = await cp.db.membership.count({ where: { organizationId: first.organizationId, role: 'admin' } });
      t.equal(admins, 1, `${label}: an admin remains`);

      // Back to two admins for the next round, through the API, by the one left.
      const left = await cp.db.membership.findFirst({
        where: { organizationId: first.organizationId, role: 'admin' },
        include: { user: true },
      });
      const remaining = left!.user.email === 'first@example.com' ? first.sessionToken : second;
      const now = (await api.get('/v1/organizations/current/members', remaining)).body.members as {
        id: string;
        email: string;
        role: string;
      }[];
      for (const m of now) {
        if (m.role !== 'admin')
          t.equal((await api.patch(`/v1/organizations/current/members/${m.id}`, remaining, { role: 'admin' })).status, 200);
      }
      for (const email of ['first@example.com', 'second@example.com']) {
        if (!now.some((m) => m.email === email)) {
          await addMember(api, smtp, remaining, { email, role: 'admin', password });
        }
      }
      members.splice(0, members.length, ...(await api.get('/v1/organizations/current/members', remaining)).body.members);
    }
  },
);
