import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/** Debian's chromium package (.ci/run installs it); tests never download a browser. */
export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/**
 * Without the background-networking flags Chromium keeps dialling Google's hosts, which this
 * machine's closed network refuses; --no-sandbox because CI runs as root.
 */
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface TestBrowser {
  /** Every page is its own tab, so each has its own session storage (its own sign-in). */
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** Headless Chromium on a new, empty --user-data-dir, removed on close. */
export async function launchChromium(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (.ci/run does), or set CHROMIUM_PATH`);
  const profile = mkdtempSync(join(tmpdir(), 'ql-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1366, height: 900 },
    timezoneId: 'UTC',
    locale: 'en-GB',
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Where screenshots go for a person to look at (git-ignored). */
export const SCREENSHOTS = new URL('../e2e/screenshots/', import.meta.url);

/** Signs the page in at `url` with a token, through the sign-in form, as a person would; waits until it names `name`. */
export async function signIn(page: Page, url: string, token: string, name: string): Promise<Page> {
  await page.goto(url);
  await page.getByLabel('Token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#who').getByText(name).waitFor();
  return page;
}

/** What the chart of one quota resource drew: every sample dot's instant and values. */
export async function drawnPoints(page: Page, resource: string): Promise<{ at: string; used: string; hard: string }[]> {
  const chart = page.locator(`svg.chart[data-resource="${resource}"]`);
  await chart.waitFor();
  return chart.locator('circle.point').evaluateAll((circles) =>
    circles.map((c) => ({
      at: c.getAttribute('data-at') ?? '',
      used: c.getAttribute('data-used') ?? '',
      hard: c.getAttribute('data-hard') ?? '',
    })),
  );
}
