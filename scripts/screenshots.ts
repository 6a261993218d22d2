// node --import tsx scripts/screenshots.ts: the README's pictures of the web interface. Starts the
// app on an embedded database (PGlite) with the small catalog of the browser tests
// (test/helpers/browser-data.ts), opens the main pages in Debian's chromium and writes
// docs/screenshots/<page>.png (1280 px wide, the top 900 px; phone-sized ones 390 px).
// Needs /usr/bin/chromium (apt-get install chromium) or SVC_CHROMIUM.
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { browserMissing, signIn, startBrowserApp } from '../test/helpers/browser.ts';
import { seedCatalog } from '../test/helpers/browser-data.ts';

if (browserMissing) {
  console.error(browserMissing);
  process.exit(1);
}

const out = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'docs', 'screenshots');
fs.mkdirSync(out, { recursive: true });

const b = await startBrowserApp('readme', {
  config: {
    'svc.auth.create_user_via_web': true,
    'svc.jobs.poll_interval': 50,
    'svc.site_title': 'Open Data Portal',
    'svc.site_description': 'Datasets of the region: weather, water and more, free to use.',
  },
});
let failed = false;
try {
  const data = await seedCatalog(b.t);
  const anonymous = await b.visitor();
  const reader = await b.visitor();
  await signIn(reader, data.reader.name);
  const ds = `/dataset/${data.dataset.name}`;
  const shots: [Page, string, string][] = [
    [anonymous, 'home', '/'],
    [anonymous, 'search', '/dataset?q=rainfall&tags=weather'],
    [anonymous, 'dataset', ds],
    [anonymous, 'resource-explorer', `${ds}/resource/${data.resource.id}?filter.city=Bayside`],
    [anonymous, 'organization', `/organization/${data.org.name}`],
    [anonymous, 'login', '/user/login'],
    [reader, 'dashboard', '/dashboard'],
  ];
  for (const [page, name, url] of shots) {
    const res = await page.goto(url);
    if (res?.status() !== 200) {
      console.error(`${url} answers ${res?.status()}: docs/screenshots/${name}.png not written`);
      failed = true;
      continue;
    }
    const file = path.join(out, `${name}.png`);
    await page.screenshot({ path: file });
    console.log(path.relative(process.cwd(), file));
  }
  await anonymous.setViewportSize({ width: 390, height: 844 });
  for (const [name, url] of [
    ['phone-home', '/'],
    ['phone-dataset', ds],
  ]) {
    const res = await anonymous.goto(url);
    if (res?.status() !== 200) continue;
    const file = path.join(out, `${name}.png`);
    await anonymous.screenshot({ path: file });
    console.log(path.relative(process.cwd(), file));
  }
} finally {
  await b.close();
}
process.exit(failed ? 1 : 0);
