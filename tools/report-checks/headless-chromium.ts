// Headless Chromium (Debian's `chromium` package) through playwright-core, with a fresh empty profile, no
// background networking, and every console error, page error and request of the pages recorded.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface HeadlessChromium {
  context: BrowserContext;
  /** console errors and uncaught page errors, in order */
  errors: string[];
  /** every URL the pages requested */
  requests: string[];
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/** Throws (the test fails) when Chromium is not installed: the render check never passes without a browser. */
export async function launchHeadlessChromium(): Promise<HeadlessChromium> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`headless Chromium is required at ${CHROMIUM_PATH} to check the report renders: install it with 'apt-get update && apt-get install -y chromium' (Debian)`);
  }
  // playwright takes the profile directory itself (it refuses --user-data-dir in args): a new, empty one
  const userDataDir = mkdtempSync(path.join(tmpdir(), 'rx-chromium-profile-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
    deviceScaleFactor: 1,
    offline: true,
    timeout: 60_000,
  });
  const errors: string[] = [];
  const requests: string[] = [];
  context.on('request', (req) => requests.push(req.url()));
  const watch = (page: Page): Page => {
    page.on('console', (msg) => {
      if (msg.type() === 'error') errors.push(msg.text());
    });
    page.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
    return page;
  };
  return {
    context,
    errors,
    requests,
    newPage: async () => watch(await context.newPage()),
    close: async () => {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
