/**
 * Debian's Chromium driven by playwright-core, launched one way for every test that needs a
 * browser (the viewer's host page, the MCP Inspector's UI, the OAuth sign-in page), and the rule
 * for a test whose program the machine lacks.
 */
import { existsSync } from "node:fs";
import { type Browser, type BrowserContext, chromium, type LaunchOptions } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const hasChromium = (): boolean => existsSync(CHROMIUM);

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

const LAUNCH: LaunchOptions = { executablePath: CHROMIUM, headless: true, args: FLAGS };

export function launchChromium(): Promise<Browser> {
  return chromium.launch(LAUNCH);
}

/** A browser with its own profile directory, as a host page that keeps downloads and storage needs. */
export function launchChromiumContext(
  profile: string,
  o: { viewport: { width: number; height: number }; deviceScaleFactor: number },
): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profile, { ...LAUNCH, ...o });
}

/** What keeps the browser tests from running here, or undefined. */
export const chromiumMissing = (): string | undefined =>
  hasChromium() ? undefined : `${CHROMIUM} is not installed (apt-get install -y chromium)`;

/**
 * Tests needing a program the machine lacks skip with one loud line locally and fail under
 * CI=true. `missing` says what is missing (undefined when nothing is); returns whether `tests` run.
 */
export function runnableOrSkipped(missing: string | undefined, tests: string): boolean {
  if (missing === undefined) return true;
  const line = `${tests} SKIPPED: ${missing}`;
  if (process.env.CI === "true") throw new Error(`CI=true: ${line}`);
  console.warn(`\n!!! ${line} !!!\n`);
  return false;
}
