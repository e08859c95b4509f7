import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import AxeBuilder from '@axe-core/playwright';
import { type Browser, chromium, type Page } from 'playwright-core';

type Tap = { teardown: (fn: () => unknown) => void; comment: (...message: unknown[]) => void };

/** Debian's Chromium (scripts/browser-setup.js installs it); HUB_CHROMIUM names another. */
export const CHROMIUM = process.env.HUB_CHROMIUM ?? '/usr/bin/chromium';
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Why the browser tests cannot run here, said loudly; undefined when they can. */
export function browserMissing(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  return `*** NO BROWSER: ${CHROMIUM} is missing, so the dashboard browser tests SKIP. Run \`node scripts/browser-setup.js\` as root (installs Debian's chromium) or set HUB_CHROMIUM. ***`;
}

/** Builds the dashboard when no build is there yet (a checkout installed with --ignore-scripts). */
export function ensureDashboardBuilt(): void {
  const built = spawnSync(process.execPath, [join(repoRoot, 'scripts', 'dashboard-build.js'), '--if-missing'], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('building the dashboard failed');
}

/**
 * Headless Chromium with the flags this machine needs: no sandbox (the tests run as root), no
 * background networking or component updates (the network is closed; Chromium would keep trying).
 */
export async function launchBrowser(t: Tap): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
    ],
  });
  t.teardown(() => browser.close());
  return browser;
}

/** Accessibility problems axe rates serious or critical on the page as it stands. */
export async function seriousViolations(page: Page): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}
