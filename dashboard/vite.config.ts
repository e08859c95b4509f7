import { defineConfig } from 'vite';

/**
 * The dashboard's build: Preact through Vite's own JSX transform (no Babel), served by the
 * control-plane under /dashboard/. One script and one stylesheet, named by content hash.
 */
export default defineConfig({
  root: import.meta.dirname,
  base: '/dashboard/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: { outDir: 'dist', emptyOutDir: true, reportCompressedSize: false, modulePreload: { polyfill: false } },
  logLevel: 'warn',
});
