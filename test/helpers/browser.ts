import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

/** Debian's Chromium, which .ci/run installs; the page tests skip without it. */
export const CHROMIUM = '/usr/bin/chromium';

/** false when Chromium is there, else the message a test skipped for want of it shows. */
export const chromiumSkip = (what: string): string | false =>
  existsSync(CHROMIUM) ? false : `Debian chromium not installed (.ci/run installs it): ${what} skipped`;

/**
 * Headless Chromium for one test, closed after it: no sandbox (root in CI), no GPU, nothing
 * fetched from elsewhere. `args` adds flags.
 */
export async function launchChromium(
  t: { after: (fn: () => Promise<void>) => void },
  args: string[] = [],
): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
      ...args,
    ],
  });
  t.after(() => browser.close());
  return browser;
}
