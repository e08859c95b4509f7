// The browser the dashboard's tests drive: Debian's Chromium, installed here when it is missing
// (npm test and CI run this first). Playwright's own browser download does not work offline, so
// the tests use the system package (docs/decisions.md#D-237). Installing needs root and apt; where
// either is missing, this says so loudly and the browser tests skip with the same message.
//
//   node scripts/browser-setup.js
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const CHROMIUM = process.env.HUB_CHROMIUM ?? '/usr/bin/chromium';

function main() {
  if (existsSync(CHROMIUM)) return;
  const root = process.getuid?.() === 0;
  const apt = spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0;
  if (!root || !apt) {
    console.warn(`\n*** browser-setup: no Chromium at ${CHROMIUM} and ${root ? 'no apt-get' : 'not root'} to install it:`);
    console.warn('*** the dashboard browser tests will SKIP. Install Debian’s `chromium` package (or set HUB_CHROMIUM).\n');
    return;
  }
  console.log('browser-setup: installing Debian’s chromium for the dashboard browser tests (once)…');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], { stdio: 'inherit', env }).status;
  // A fresh machine may not have read its package lists yet.
  if (install() !== 0 && (spawnSync('apt-get', ['update'], { stdio: 'inherit', env }).status !== 0 || install() !== 0)) {
    console.warn('\n*** browser-setup: apt-get could not install chromium: the dashboard browser tests will SKIP.\n');
  }
}

main();
