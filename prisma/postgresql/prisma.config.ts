import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: '.',
  migrations: { path: './migrations' },
});
