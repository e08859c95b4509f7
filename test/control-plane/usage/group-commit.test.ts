import t from 'tap';
import { violatedConstraint } from '../../../control-plane/db/constraints.js';
import { GroupCommit } from '../../../control-plane/usage/group-commit.js';
import { Prisma } from '../../../generated/prisma/sqlite/client.js';
import { testProviders } from '../../helpers/database.js';
import { usageWorld } from '../../helpers/usage-world.js';

// Writes that arrive while a commit runs commit together; a refused write fails alone.
for (const provider of testProviders()) {
  t.test(`group commit on ${provider}`, async (t) => {
    const w = await usageWorld(t, provider);
    const accessId = await w.access({ agentId: await w.agent(), balanceMicros: 10n });
    // One statement per write here, so a group is several statements in one transaction.
    const group = new GroupCommit<bigint>(w.db, (debits) =>
      debits.map(
        (micros) =>
          Prisma.sql`UPDATE "Access" SET "balanceMicros" = CASE WHEN "balanceMicros" >= ${micros} THEN "balanceMicros" - ${micros} ELSE NULL END WHERE "id" = ${accessId}`,
      ),
    );

    const outcomes = await Promise.allSettled([1n, 2n, 100n, 3n, 4n].map((micros) => group.commit(micros)));
    t.same(
      outcomes.map((o) => o.status),
      ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
    );
    t.equal(violatedConstraint((outcomes[2] as PromiseRejectedResult).reason), 'not_null', 'the refused write gets its own error');
    t.equal(await w.balance(accessId), 0n, 'the others all committed, once');

    const late = await Promise.allSettled([group.commit(1n)]);
    t.equal(late[0]!.status, 'rejected', 'alone, a refused write fails at once');
  });
}
