import { ApiError } from './api.js';
import { h, notice, type Child } from './dom.js';

/** What a failed request means for the person looking at the page, in words. */
export function describeError(err: unknown): string {
  if (!(err instanceof ApiError)) return err instanceof Error ? err.message : String(err);
  if (err.status === 401) return 'This API key is not valid: it is unknown, malformed or revoked.';
  // contract.md §3: SCHEMA_FORBIDDEN never says what was refused, so neither do we.
  if (err.status === 403 && err.code === 'SCHEMA_FORBIDDEN') return 'This key does not have the rights this page needs. Sign in with a key whose role and scopes allow it.';
  if (err.status === 404 && err.code === 'ROUTE_NOT_FOUND') return 'This server does not offer this yet (its route is missing).';
  if (err.status === 429) return 'Too many requests for the server’s rate limit: wait a minute and try again.';
  if (err.status === 0) return 'Could not reach the server. Is it still running?';
  return `${err.message}${err.code ? ` (${err.code})` : ''}`;
}

export const errorNotice = (err: unknown): HTMLElement => notice('error', describeError(err));

/** The page heading; focused after each navigation so keyboard and screen-reader users start there. */
export function pageHeading(text: string, ...rest: Child[]): HTMLElement {
  return h('h1', { tabIndex: -1, class: 'page-title' }, text, ...rest);
}

export function link(href: string, text: Child, props: Record<string, unknown> = {}): HTMLAnchorElement {
  return h('a', { href, ...props }, text);
}

export function button(text: string, onClick: (e: Event) => void, props: Record<string, unknown> = {}): HTMLButtonElement {
  return h('button', { type: 'button', ...props, on: { click: onClick } }, text);
}

/** A table whose header cells are scoped, for screen readers. */
export function table(caption: string, headers: Child[], rows: Child[][], props: Record<string, unknown> = {}): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      props,
      h('caption', { class: 'sr-only' }, caption),
      h('thead', null, h('tr', null, headers.map((x) => h('th', { scope: 'col' }, x)))),
      h('tbody', null, rows.map((cells) => h('tr', null, cells.map((c) => h('td', null, c))))),
    ),
  );
}
