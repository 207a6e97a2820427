import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/** Debian's chromium package (.ci/run installs it); tests never download a browser. */
export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/**
 * Without the background-networking flags Chromium keeps dialling Google's hosts, which this
 * machine's closed network refuses; --no-sandbox because CI runs as root.
 */
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

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
