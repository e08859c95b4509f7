// Fails when prisma/models.prisma and the committed migrations disagree, for either database.
import { pendingSchemaChange } from '../control-plane/db/schema-engine.js';
import type { Provider } from '../control-plane/db/schema-files.js';
import { withScratchEngine } from './scratch-database.js';

let drift = false;
for (const provider of ['sqlite', 'postgresql'] as Provider[]) {
  const sql = await withScratchEngine(provider, (engine) => pendingSchemaChange(engine, provider));
  if (sql) {
    drift = true;
    console.error(`${provider}: the models differ from the migrations. Run: npm run db:new -- <name>\n${sql}`);
  } else {
    console.log(`${provider}: migrations match the models`);
  }
}
process.exit(drift ? 1 : 0);
