// Browser tests: the real app listening on a local port, driven by Debian's chromium through
// playwright-core. Every step can be saved as a screenshot under
// test-artifacts/screenshots/<suite>-<database>/ (gitignored; CI keeps the folder of its run).
// Without /usr/bin/chromium (a fresh machine: `apt-get install chromium`; .ci/run installs it) the
// browser tests are skipped with `browserMissing` as the reason.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { dbLabel, startApp, type StartOptions, type TestApp } from './app.ts';

export const CHROMIUM = process.env.SVC_CHROMIUM ?? '/usr/bin/chromium';

/** Why the browser tests cannot run here, or false when they can. */
export const browserMissing: string | false = fs.existsSync(CHROMIUM)
  ? false
  : `browser tests skipped: ${CHROMIUM} is not installed (apt-get install chromium, or set SVC_CHROMIUM)`;

// Flags for a machine without network beyond loopback: no background connections, no GPU. The
// fresh --user-data-dir is playwright's own (launch() makes a new temporary one every time).
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const SCREENSHOT_ROOT = path.join(process.cwd(), 'test-artifacts', 'screenshots');

/** A free TCP port on loopback (for svc.site_url before the app listens). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface BrowserApp {
  t: TestApp;
  /** http://127.0.0.1:<port>, also the app's svc.site_url (so absolute links stay on it). */
  base: string;
  browser: Browser;
  /** A new visitor: its own cookies, a page on the site (relative URLs work in goto). */
  visitor(): Promise<Page>;
  /** Saves a full-page screenshot as <NN>-<step>.png; returns the file. */
  shot(page: Page, step: string): Promise<string>;
  /** Console errors and uncaught page errors seen so far (CSP refusals land here), per page URL. */
  problems: string[];
  close(): Promise<void>;
}

/** Starts the app on a real port (startApp + listen) and a headless chromium. */
export async function startBrowserApp(suite: string, opts: StartOptions = {}): Promise<BrowserApp> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t = await startApp({ ...opts, config: { 'svc.site_url': base, ...opts.config } });
  let browser: Browser | undefined;
  try {
    await t.app.listen({ port, host: '127.0.0.1' });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60_000 });
  } catch (e) {
    await browser?.close().catch(() => undefined);
    await t.close();
    throw e;
  }
  const dir = path.join(SCREENSHOT_ROOT, `${suite}-${dbLabel}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const contexts: BrowserContext[] = [];
  const problems: string[] = [];
  let step = 0;
  return {
    t,
    base,
    browser,
    problems,
    async visitor() {
      const context = await browser!.newContext({ baseURL: base, viewport: { width: 1280, height: 900 }, acceptDownloads: true });
      context.setDefaultTimeout(20_000);
      context.setDefaultNavigationTimeout(30_000);
      contexts.push(context);
      const page = await context.newPage();
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(`${page.url()}: console: ${m.text()}`);
      });
      page.on('pageerror', (e) => problems.push(`${page.url()}: ${e.message}`));
      return page;
    },
    async shot(page, name) {
      const file = path.join(dir, `${String(++step).padStart(2, '0')}-${name.replace(/[^a-z0-9_-]+/gi, '-')}.png`);
      await page.screenshot({ path: file, fullPage: true });
      return file;
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => undefined);
      await browser!.close().catch(() => undefined);
      await t.close();
    },
  };
}

const require = createRequire(import.meta.url);
let axeSource: string | undefined;

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; html: string }[];
}

/**
 * Runs axe-core on the page (WCAG 2.x A and AA rules plus best practices) and returns the serious
 * and critical violations. The script is evaluated through the DevTools protocol, which the page's
 * CSP does not restrict, so the page is checked under its real policy.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  axeSource ??= fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(axeSource);
  const violations = (await page.evaluate(async () => {
    const axe = (globalThis as any).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n: any) => ({ target: n.target, html: String(n.html).slice(0, 200) })),
    }));
  })) as AxeViolation[];
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** A readable list of violations for an assertion message. */
export function describeViolations(url: string, violations: AxeViolation[]): string {
  return violations
    .map((v) => `${url}: ${v.id} (${v.impact}) ${v.help}\n${v.nodes.map((n) => `    ${n.target.join(' ')}  ${n.html}`).join('\n')}`)
    .join('\n');
}

/** Polls `probe` until it returns a truthy value (or throws after `ms`). */
export async function eventually<T>(what: string, probe: () => Promise<T>, ms = 60_000, every = 250): Promise<T> {
  const until = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

/** Signs in through the login form (the test users' password unless given). */
export async function signIn(page: Page, login: string, password = 'correct horse battery'): Promise<void> {
  await page.goto('/user/login');
  await page.getByLabel('Username or e-mail').fill(login);
  await page.getByLabel(/^Password/).fill(password);
  await page.getByRole('main').getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL((url) => !url.pathname.startsWith('/user/login'));
}
