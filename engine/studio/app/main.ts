import { api, ApiError } from './api.js';
import { h, notice, replace } from './dom.js';
import { keysPage } from './keys.js';
import { objectPage, objectsPage } from './objects.js';
import { recordPage } from './record-form.js';
import { recordsPage } from './records.js';
import { rolesPage } from './roles.js';
import { forgetSchema } from './schema.js';
import { searchPage } from './search.js';
import { session } from './session.js';
import { sourcePage, sourcesPage } from './sources.js';
import { describeError, errorNotice } from './ui.js';
import { viewPage, viewsPage } from './views.js';

/**
 * Studio's shell (contract.md §9): sign-in, the navigation, and a hash router. Every page
 * reads the public API with the signed-in key, so it shows what that key may see.
 */
type Page = (main: HTMLElement, params: string[], query: URLSearchParams) => Promise<void>;

const ROUTES: [RegExp, Page][] = [
  [/^\/?$/, objectsPage],
  [/^\/objects$/, objectsPage],
  [/^\/objects\/([^/]+)$/, objectPage],
  [/^\/records\/([^/]+)$/, recordsPage],
  [/^\/records\/([^/]+)\/(new|[^/]+)$/, recordPage],
  [/^\/search$/, searchPage],
  [/^\/views$/, viewsPage],
  [/^\/views\/([^/]+)$/, viewPage],
  [/^\/sources$/, sourcesPage],
  [/^\/sources\/([^/]+)$/, sourcePage],
  [/^\/keys$/, keysPage],
  [/^\/roles$/, rolesPage],
];

const NAV: [string, string][] = [
  ['#/objects', 'Objects'],
  ['#/search', 'Search'],
  ['#/views', 'Views'],
  ['#/sources', 'Sources'],
  ['#/keys', 'Keys'],
  ['#/roles', 'Roles'],
];

const root = document.getElementById('app') as HTMLElement;
let navigation = 0;

function signInForm(message?: string): void {
  const input = h('input', { type: 'password', id: 'api-key', name: 'api-key', autocomplete: 'off', required: true, spellcheck: false });
  const status = h('div', { 'aria-live': 'polite' }, message ? notice('error', message) : null);
  const form = h(
    'form',
    { class: 'signin', 'aria-labelledby': 'signin-title' },
    h('h1', { id: 'signin-title' }, 'Sign in to Studio'),
    h('p', null, 'Studio uses the API with your key, so it can do only what the key may. The key stays in this tab only (session storage) until you sign out or close the tab.'),
    h('div', { class: 'field' }, h('label', { for: 'api-key' }, 'API key'), input),
    h('button', { type: 'submit' }, 'Sign in'),
    status,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void signIn(input.value.trim(), status);
  });
  replace(root, h('main', { id: 'main', class: 'signin-main' }, form));
  input.focus();
}

async function signIn(key: string, status: HTMLElement): Promise<void> {
  session.set(key);
  forgetSchema();
  try {
    await api('GET', '/schema/objects');
  } catch (err) {
    // 401: the key opens nothing, so it is not kept. 403: it is a real key that may not read
    // the schema; it is kept, and each page says what it lacks.
    if (!(err instanceof ApiError && err.status === 403)) {
      session.clear();
      replace(status, notice('error', describeError(err)));
      return;
    }
  }
  if (!location.hash || location.hash === '#/') location.hash = '#/objects';
  renderShell();
}

function signOut(): void {
  session.clear();
  forgetSchema();
  location.hash = '';
  signInForm();
}

function renderShell(): void {
  const main = h('main', { id: 'main', tabIndex: -1 });
  const links = NAV.map(([href, text]) => h('li', null, h('a', { href, 'data-nav': href }, text)));
  replace(
    root,
    h('a', { class: 'skip', href: '#main', on: { click: (e) => { e.preventDefault(); main.focus(); } } }, 'Skip to content'),
    h(
      'header',
      { class: 'top' },
      h('a', { class: 'brand', href: '#/objects' }, 'schemasync Studio'),
      h('nav', { 'aria-label': 'Main' }, h('ul', null, links)),
      h('button', { type: 'button', class: 'signout', on: { click: signOut } }, 'Sign out'),
    ),
    main,
  );
  void route();
}

async function route(): Promise<void> {
  const main = document.getElementById('main');
  if (!main || !session.get()) return;
  const current = ++navigation;
  const [path = '', search = ''] = location.hash.replace(/^#/, '').split('?');
  for (const a of document.querySelectorAll<HTMLAnchorElement>('nav a[data-nav]')) {
    const active = path.startsWith(a.getAttribute('data-nav')!.slice(1));
    if (active) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const match = ROUTES.map(([re, page]) => [re.exec(path), page] as const).find(([m]) => m !== null);
  replace(main, h('p', { class: 'loading' }, 'Loading…'));
  if (!match) {
    replace(main, h('h1', { tabIndex: -1 }, 'Not found'), notice('error', `No page at ${path}`));
    return;
  }
  const [m, page] = match;
  const params = (m ?? []).slice(1).map((p) => decodeURIComponent(p ?? ''));
  const target = h('div', { class: 'page' });
  try {
    await page(target, params, new URLSearchParams(search));
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      session.clear();
      signInForm(describeError(err));
      return;
    }
    replace(target, h('h1', { tabIndex: -1 }, 'Something went wrong'), errorNotice(err));
  }
  if (current !== navigation) return; // a newer navigation replaced this one
  replace(main, target);
  const title = target.querySelector<HTMLElement>('h1');
  document.title = `${title?.textContent ?? 'Studio'} · schemasync Studio`;
  title?.focus();
}

window.addEventListener('hashchange', () => void route());
if (session.get()) renderShell();
else signInForm();
