import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordOut } from '../../engine/model/stored.js';
import { launch, newPage, pushExample, serve, shot, signIn, type Served } from './harness.js';

/**
 * Studio in a real browser (issue 20): the built `serve`, the example CRM, Debian's
 * Chromium. The tests run in order over one server, as one person's session would.
 */
const XSS = '<img src=x onerror=alert(1)>';
/** Waits for what the page shows (it renders after its requests answer). */
const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 10_000 });

let server: Served;
let browser: Browser;
let page: Page;
let dialogs: string[];
let errors: string[];
const seeded: string[] = [];
let acme: RecordOut;

const cells = (p: Page, column: number) =>
  p.locator('table.records tbody tr').evaluateAll((rows, i) => rows.map((r) => (r.children[i] as HTMLElement).innerText), column);
const rowIds = (p: Page) => p.locator('table.records tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id')!));

beforeAll(async () => {
  server = await serve();
  await pushExample(server.client);
  const companies = server.client.records('company');
  acme = await companies.create({ name: 'Acme', industry: 'software', employees: 1200 });
  const xss = await companies.create({ name: XSS, industry: 'retail', employees: 3 });
  seeded.push(acme.id, xss.id);
  const industries = ['software', 'manufacturing', 'retail', 'finance', 'healthcare', 'other'];
  const batch = Array.from({ length: 120 }, (_, i) => ({
    name: `Company ${String(i).padStart(3, '0')}`,
    industry: industries[i % industries.length],
    employees: (i * 37) % 1000,
    founded: `20${String(10 + (i % 15)).padStart(2, '0')}-01-15`,
  }));
  for (const r of await companies.bulkCreate(batch)) seeded.push(r.id);
  browser = await launch();
  ({ page, dialogs, errors } = await newPage(browser));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('Studio', () => {
  it('is served at /_/ with a strict content policy, its assets only, and announced by serve', async () => {
    expect(server.stdout()).toContain(`studio: ${server.origin}/_/`);
    const html = await fetch(`${server.origin}/_/`);
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toMatch(/text\/html/);
    expect(html.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await html.text()).toContain('main.js');
    const js = await fetch(`${server.origin}/_/main.js`);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    for (const path of ['/_/..%2Fpackage.json', '/_/%2e%2e%2f%2e%2e%2fpackage.json', '/_/credentials.json', '/_/nope.js']) {
      const r = await fetch(server.origin + path);
      expect(r.status, path).toBe(404);
      expect((await r.json()).code).toBe('ROUTE_NOT_FOUND');
    }
  });

  it('refuses a bad key with a clear message and keeps nothing', async () => {
    await signIn(page, server.origin, 'ssk_0000000000000000_notarealkey');
    await poll(() => page.getByRole('alert').innerText()).toContain('not valid');
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await shot(page, 'signin-1280');
  });

  it('says so when the key lacks the rights a page needs (403)', async () => {
    const limited = await server.client.keys.create({ name: 'records only', role: 'viewer', scopes: ['records:read'] });
    const { context, page: p } = await newPage(browser);
    await signIn(p, server.origin, limited.secret);
    await poll(() => p.getByRole('alert').innerText()).toContain('does not have the rights');
    await context.close();
  });

  it('signs in with the keyboard, keeps the key in session storage only, and lists the objects', async () => {
    await page.getByLabel('API key').fill(server.ownerKey);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Objects' }).waitFor();
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('H1');
    expect(await page.evaluate(() => [sessionStorage.length, localStorage.length, document.cookie])).toEqual([1, 0, '']);
    for (const name of ['company', 'deal', 'person']) await poll(() => page.getByRole('link', { name, exact: true }).count()).toBe(1);
    await shot(page, 'objects-1280');
  });

  it('shows an object with its attributes: type, constraints, owner, protection', async () => {
    await page.getByRole('link', { name: 'deal', exact: true }).click();
    await page.getByRole('heading', { name: 'Object deal' }).waitFor();
    const row = (name: string) => page.locator('tr', { has: page.locator('code', { hasText: new RegExp(`^${name}$`) }) }).innerText();
    expect(await row('stage')).toMatch(/select\s+required; options: lead, qualified, proposal, won, lost; default "lead"\s+source: crm\s+no/);
    expect(await row('company')).toContain('→ company');
    expect(await row('contract')).toContain('accepts application/pdf, image/*; up to 10 MB');
    expect(await row('id')).toMatch(/system\s+yes$/);
  });

  it('renders record text as text, never as markup', async () => {
    await page.goto(`${server.origin}/_/#/records/company`);
    await page.getByRole('heading', { name: /Records of Company/ }).waitFor();
    await page.getByRole('button', { name: 'Sort by Name' }).click();
    await poll(() => cells(page, 1)).toContain(XSS);
    expect(await page.locator('main img').count()).toBe(0);
    expect(dialogs).toEqual([]);
    await shot(page, 'records-1280');
  });

  it('sorts by a column, both ways', async () => {
    await page.getByRole('button', { name: 'Sort by Employees' }).click();
    await poll(async () => (await page.locator('th[aria-sort="ascending"]').innerText())).toContain('Employees');
    const up = (await cells(page, 5)).map(Number);
    expect(up).toEqual([...up].sort((a, b) => a - b));
    await page.getByRole('button', { name: 'Sort by Employees' }).click();
    await page.locator('th[aria-sort="descending"]').waitFor();
    const down = (await cells(page, 5)).map(Number);
    expect(down[0]).toBe(1200);
    expect(down).toEqual([...down].sort((a, b) => b - a));
  });

  it('filters by select option, number range and text', async () => {
    await page.getByText('Filters', { exact: true }).click();
    await page.getByRole('combobox', { name: 'Industry' }).selectOption('software');
    const employees = page.getByRole('group', { name: 'Employees' });
    await employees.getByLabel('at least').fill('500');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await poll(async () => new Set(await cells(page, 4))).toEqual(new Set(['software']));
    const counts = (await cells(page, 5)).map(Number);
    expect(counts.length).toBeGreaterThan(3);
    expect(counts.every((n) => n >= 500)).toBe(true);
    // the same filter asked of the API directly gives the same rows
    const direct = await server.client.records('company').search({ filter: { and: [{ industry: 'software' }, { employees: { gte: 500 } }] }, limit: 500 });
    expect(new Set(await rowIds(page))).toEqual(new Set(direct.records.map((r) => r.id)));

    await page.getByRole('button', { name: 'Clear filters' }).click();
    const founded = page.getByRole('group', { name: 'Founded' });
    await founded.getByLabel('from').fill('2020-01-01');
    await founded.getByLabel('to').fill('2022-12-31');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await poll(async () => new Set((await cells(page, 6)).map((d) => d.slice(0, 4)))).toEqual(new Set(['2020', '2021', '2022']));

    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.getByLabel('Name contains').fill('acm');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await poll(() => cells(page, 1)).toEqual(['Acme']);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await poll(async () => (await rowIds(page)).length).toBe(50);
  });

  it('shows the answer to the latest request only, however the answers arrive', async () => {
    // the first request is held back, so its answer arrives after the second's
    let held = true;
    await page.route('**/v1/records/company/search', async (route) => {
      if (held) {
        held = false;
        await new Promise((r) => setTimeout(r, 800));
      }
      await route.continue();
    });
    await page.getByRole('button', { name: /^Sort by Founded/ }).click(); // ascending: held
    await page.getByRole('button', { name: /^Sort by Founded/ }).click(); // descending: answered first
    await page.waitForTimeout(1200);
    await page.unroute('**/v1/records/company/search');
    expect(await page.locator('th[aria-sort="descending"]').innerText()).toContain('Founded');
    const founded = (await cells(page, 6)).filter(Boolean);
    expect(founded.length).toBeGreaterThan(10);
    expect(founded).toEqual([...founded].sort().reverse());
  });

  it('chooses columns', async () => {
    await page.getByText('Columns', { exact: true }).click();
    await page.getByRole('checkbox', { name: 'Domain' }).uncheck();
    await poll(() => page.getByRole('button', { name: 'Sort by Domain' }).count()).toBe(0);
    await page.getByRole('checkbox', { name: 'Tags' }).check();
    // a sorted column's button cycles ascending → descending → the server's order
    for (let i = 0; i < 3 && (await page.locator('th[aria-sort="ascending"], th[aria-sort="descending"]').count()) > 0; i++) {
      await page.getByRole('button', { name: /^Sort by Employees/ }).click();
      await page.waitForLoadState('networkidle');
    }
    await poll(() => page.locator('th[aria-sort="ascending"], th[aria-sort="descending"]').count()).toBe(0);
    expect(await page.locator('table.records thead th').allInnerTexts()).toContain('Tags');
  });

  it('pages with cursors: rows others insert meanwhile never repeat or hide a row', async () => {
    const seen: string[] = [];
    seen.push(...(await rowIds(page)));
    expect(seen).toHaveLength(50);
    // another client writes while we read
    const more = await server.client.records('company').bulkCreate(Array.from({ length: 30 }, (_, i) => ({ name: `Late ${i}`, employees: i })));
    for (;;) {
      const next = page.getByRole('button', { name: 'Next page' });
      if (await next.isDisabled()) break;
      const before = await rowIds(page);
      await next.click();
      await poll(async () => (await rowIds(page))[0]).not.toBe(before[0]);
      seen.push(...(await rowIds(page)));
    }
    expect(new Set(seen).size).toBe(seen.length); // no row twice
    for (const id of seeded) expect(seen).toContain(id); // no row skipped
    expect(seen.length).toBeLessThanOrEqual(seeded.length + more.length);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await poll(() => page.locator('.pager span').innerText()).not.toBe('Page 1');
  });

  let dealId = '';
  it('creates a record from the generated form, with validation errors at their fields', async () => {
    await page.goto(`${server.origin}/_/#/records/deal/new`);
    await page.getByRole('heading', { name: 'New Deal' }).waitFor();
    expect(await page.getByLabel('Stage').inputValue()).toBe('lead'); // the declared default
    await page.getByLabel('Title').fill('Big deal');
    await page.getByLabel('Amount').fill('-5');
    await page.getByLabel('Expected close').fill('2026-12-31');
    await page.getByRole('button', { name: 'Create record' }).click();
    // company is required, amount must be >= 0: both named at their fields by the envelope's errors
    const amountError = page.locator('[data-attribute="amount"] .field-error');
    await poll(() => amountError.innerText()).toMatch(/at least 0/);
    expect(await page.getByLabel('Amount').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('[data-attribute="company"] .field-error').innerText()).toMatch(/required/);
    await shot(page, 'record-errors-1280');

    await page.getByLabel('Amount').fill('1000');
    await page.getByRole('combobox', { name: 'Company' }).fill('acm');
    await page.getByRole('option').getByRole('button', { name: /Acme/ }).click();
    await page.getByRole('button', { name: 'Create record' }).click();
    await page.getByRole('heading', { name: 'Deal record' }).waitFor();
    dealId = decodeURIComponent(page.url().split('/').pop()!);
    const stored = await server.client.records('deal').get(dealId);
    expect(stored.values).toMatchObject({ title: 'Big deal', amount: 1000, stage: 'lead', company: acme.id, close_date: '2026-12-31' });
    // The record page names a chosen relation once its record is read (inputs.ts): the chip shows the id until then.
    await poll(() => page.locator('[data-attribute="company"] .chip').innerText()).toContain('Acme');
  });

  it('edits with if-match; when someone else saved first it shows both versions and retries on the new one', async () => {
    await page.getByLabel('Amount').fill('2000');
    await page.getByLabel('Stage').selectOption('qualified');
    const before = await server.client.records('deal').get(dealId);
    await server.client.records('deal').update(dealId, { notes: 'changed by Bob', amount: 1500 }, { ifMatch: before.version });
    await page.getByRole('button', { name: 'Save changes' }).click();
    const conflict = page.getByRole('heading', { name: 'Someone else changed this record' });
    await conflict.waitFor();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Someone else changed this record');
    const row = (attr: string) => page.locator(`.conflict tr[data-attribute="${attr}"]`).innerText();
    expect(await row('amount')).toMatch(/2000\s+1500/);
    expect(await row('notes')).toMatch(/changed by Bob/);
    // only what either side changed is listed (an untouched empty list is no change)
    expect(await page.locator('.conflict tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-attribute')))).toEqual(['stage', 'amount', 'notes']);
    await shot(page, 'conflict-1280');
    // nothing of ours was written
    expect((await server.client.records('deal').get(dealId)).values['amount']).toBe(1500);
    await page.getByRole('button', { name: /Apply my changes to version/ }).click();
    await poll(() => page.getByRole('status').filter({ hasText: 'Saved' }).count()).toBe(1);
    const after = await server.client.records('deal').get(dealId);
    expect(after.values).toMatchObject({ amount: 2000, stage: 'qualified', notes: 'changed by Bob' });
    expect(after.version).toBe(before.version + 2);
  });

  it('uploads a document with progress, refusing what the attribute does not take, then renames and downloads it', async () => {
    await page.goto(`${server.origin}/_/#/records/company/${acme.id}`);
    await page.getByRole('heading', { name: 'Documents' }).waitFor();
    const file = page.getByLabel('File for Logo');
    const upload = page.locator('[data-attribute="logo"]').getByRole('button', { name: 'Upload' });
    const alert = () => page.locator('[data-attribute="logo"] [role="alert"]').innerText();

    // checked before sending: the type, then the size
    await file.setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') });
    await upload.click();
    await poll(alert).toContain('does not accept');
    await file.setInputFiles({ name: 'huge.png', mimeType: 'image/png', buffer: Buffer.alloc(600 * 1024, 1) });
    await upload.click();
    await poll(alert).toContain('over Logo');
    expect(await server.client.records('company').get(acme.id).then((r) => r.values['logo'] ?? null)).toBeNull();

    const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(40 * 1024, 7)]);
    await file.setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: png });
    await upload.click();
    await poll(() => page.locator('[data-attribute="logo"] [role="status"]').first().innerText()).toContain('Uploaded logo.png');
    expect(await page.locator('[data-attribute="logo"] progress').evaluate((p: HTMLProgressElement) => [p.hidden, p.value])).toEqual([false, 100]);
    const docId = (await server.client.records('company').get(acme.id)).values['logo'] as string;
    expect(typeof docId).toBe('string');

    // the single-file rule is the server's to judge: its refusal is shown as it came
    await file.setInputFiles({ name: 'second.png', mimeType: 'image/png', buffer: png });
    await upload.click();
    await poll(alert).toMatch(/Refused by the server: .*DOCUMENT_MULTIPLE_NOT_ALLOWED/);
    await shot(page, 'documents-1280');

    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByLabel('New title for logo.png').fill('Acme logo');
    await page.getByRole('button', { name: 'Save title' }).click();
    await poll(() => page.locator('.doc-title').innerText()).toBe('Acme logo');
    expect((await server.client.documents.get(docId)).title).toBe('Acme logo');

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download' }).click()]);
    expect(download.suggestedFilename()).toBe('logo.png');
    const { readFileSync } = await import('node:fs');
    expect(readFileSync((await download.path())!).equals(png)).toBe(true);
  });

  it('edits JSON in its own editor: bad JSON is named at the field and nothing is sent', async () => {
    const before = await server.client.records('company').get(acme.id);
    await page.getByLabel('Metadata').fill('{"tier": gold}');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await poll(() => page.locator('[data-attribute="metadata"] .field-error').innerText()).toContain('not valid JSON');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe(await page.getByLabel('Metadata').getAttribute('id'));
    expect((await server.client.records('company').get(acme.id)).version).toBe(before.version);
    await page.getByLabel('Metadata').fill('{"tier": "gold", "seats": [1, 2]}');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await poll(() => page.getByRole('status').filter({ hasText: 'Saved' }).count()).toBe(1);
    expect((await server.client.records('company').get(acme.id)).values['metadata']).toEqual({ tier: 'gold', seats: [1, 2] });
  });

  it('searches across objects, marking matches from offsets as text', async () => {
    await page.goto(`${server.origin}/_/#/search`);
    await page.getByLabel('Search all records').fill('img');
    await page.getByRole('button', { name: 'Search' }).click();
    // A record's name holds markup (XSS): the hit shows it as text, its match marked from offsets.
    await page.locator('.hit').first().waitFor();
    expect(await page.locator('.hit mark').first().innerText()).toMatch(/img/i);
    expect(await page.locator('main img').count()).toBe(0);
    expect(dialogs).toEqual([]);
    await shot(page, 'search-1280');
  });

  it('shows views and runs them', async () => {
    await page.goto(`${server.origin}/_/#/views`);
    await page.getByRole('link', { name: 'open_deals' }).click();
    await page.getByRole('heading', { name: 'View open_deals' }).waitFor();
    expect(await page.locator('.facts').innerText()).toMatch(/"in": \[\s+"lead",\s+"qualified",\s+"proposal"/);
    await poll(() => page.locator('.view-results').innerText()).toContain('Big deal');
  });

  it('shows a source, its declaration and history', async () => {
    await page.goto(`${server.origin}/_/#/sources`);
    await page.getByRole('link', { name: 'crm' }).click();
    await page.getByRole('heading', { name: 'Source crm' }).waitFor();
    expect(await page.locator('pre.declaration').innerText()).toContain('"open_deals"');
    await poll(() => page.getByRole('table', { name: 'History of crm' }).count()).toBe(1);
  });

  it('creates a key (its secret shown once) and revokes it', async () => {
    await page.goto(`${server.origin}/_/#/keys`);
    await page.getByRole('heading', { name: 'Create a key' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('ci reader');
    await page.getByLabel('Role').selectOption('viewer');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = await page.getByLabel('Secret').inputValue();
    expect(secret).toMatch(/^ssk_/);
    const asKey = (k: string) => fetch(`${server.base}/schema/objects`, { headers: { authorization: `Bearer ${k}` } }).then((r) => r.status);
    expect(await asKey(secret)).toBe(200);
    await shot(page, 'keys-1280');
    await page.getByRole('button', { name: 'Revoke key ci reader' }).click();
    await page.getByRole('button', { name: 'Confirm revoke ci reader' }).click();
    await poll(() => asKey(secret)).toBe(401);
    await poll(() => page.locator('main').innerText()).toContain('Key ci reader revoked');
  });

  it('shows roles and creates one', async () => {
    await page.getByRole('link', { name: 'Roles' }).click();
    await page.getByRole('heading', { name: 'Roles' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('auditor');
    await page.getByRole('button', { name: 'Create role' }).click();
    await poll(() => page.getByRole('table', { name: 'Roles' }).innerText()).toContain('auditor');
    expect((await server.client.roles.get('auditor')).builtIn).toBe(false);
  });

  it('tells a key that may not manage keys so, on the keys page', async () => {
    const member = await server.client.keys.create({ name: 'member', role: 'member' });
    const { context, page: p } = await newPage(browser);
    await signIn(p, server.origin, member.secret);
    await p.getByRole('heading', { name: 'Objects' }).waitFor();
    await p.getByRole('link', { name: 'Keys' }).click();
    await poll(() => p.getByRole('alert').innerText()).toContain('does not have the rights');
    await context.close();
  });

  it('signs out: the key is gone from the tab, and a reload asks again', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.reload();
    await page.getByLabel('API key').waitFor();
    expect(errors).toEqual([]);
    expect(dialogs).toEqual([]);
  });

  it('is usable at 390×844: nothing wider than the screen, tables scroll in place', async () => {
    const { context, page: p } = await newPage(browser, { width: 390, height: 844 });
    await p.goto(`${server.origin}/_/`);
    await shot(p, 'signin-390');
    await signIn(p, server.origin, server.ownerKey);
    for (const [hash, name] of [
      ['#/objects', 'objects-390'],
      ['#/records/company', 'records-390'],
      [`#/records/deal/${dealId}`, 'record-390'],
      ['#/search', 'search-390'],
      ['#/keys', 'keys-390'],
    ] as const) {
      await p.goto(`${server.origin}/_/${hash}`);
      await p.locator('main h1').waitFor();
      await p.waitForLoadState('networkidle');
      expect(await p.evaluate(() => document.documentElement.scrollWidth), hash).toBeLessThanOrEqual(390);
      await shot(p, name);
    }
    await context.close();
  });
});
