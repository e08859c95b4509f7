import t from 'tap';
import { pendingSchemaChange } from '../../../control-plane/db/schema-engine.js';
import { schemaFiles } from '../../../control-plane/db/schema-files.js';
import { withScratchEngine } from '../../../scripts/scratch-database.js';

// `npm run db:check` fails when the models and the migrations disagree: prove the diff it relies
// on is empty for the committed state and names the change when a model is added.
for (const provider of ['sqlite', 'postgresql'] as const) {
  t.test(`schema check on ${provider}`, async (t) => {
    t.equal(
      await withScratchEngine(provider, (engine) => pendingSchemaChange(engine, provider)),
      '',
      'committed migrations match the models',
    );

    const drifted = schemaFiles(provider).map((f) =>
      f.path.endsWith('models.prisma') ? { ...f, content: `${f.content}\nmodel DriftProbe {\n  id String @id\n}\n` } : f,
    );
    const sql = await withScratchEngine(provider, (engine) => pendingSchemaChange(engine, provider, drifted), drifted);
    t.match(sql, /CREATE TABLE "DriftProbe"/, 'an unmigrated model is reported');
  });
}
