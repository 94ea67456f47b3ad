import { api, ApiError, seg } from './api.js';
import { checkboxes, field, h, notice, replace } from './dom.js';
import { formatTime } from './format.js';
import { button, describeError, errorNotice, pageHeading, table } from './ui.js';
import type { KeyOut, Scope } from './types.js';

/**
 * API keys (contract.md §3), for keys that may manage them: list, create (the secret shown
 * this once — the server keeps only its hash), revoke. A key without keys:manage gets the
 * server's 403, said as such.
 */
// The page ships no server code, so the scope list is written here; the two checks below
// make the compiler refuse it when it differs from the one definition (engine/model/keys.ts).
const SCOPES = ['records:read', 'records:write', 'schema:read', 'schema:write', 'files:read', 'files:write', 'keys:manage', 'search', 'mcp'] as const satisfies readonly Scope[];
const everyScopeListed: Exclude<Scope, (typeof SCOPES)[number]> extends never ? true : never = true;
void everyScopeListed;
const BUILT_IN_ROLES = ['owner', 'admin', 'member', 'viewer'];

export async function keysPage(main: HTMLElement): Promise<void> {
  main.append(pageHeading('API keys'));
  const listArea = h('div');
  const created = h('div', { 'aria-live': 'polite' });
  let keys: KeyOut[];
  try {
    keys = (await api<KeyOut[]>('GET', '/keys')).data;
  } catch (err) {
    main.append(errorNotice(err));
    return;
  }
  const custom = await api<{ name: string }[]>('GET', '/roles').then((r) => r.data.map((x) => x.name).filter((n) => !BUILT_IN_ROLES.includes(n))).catch(() => [] as string[]);

  const renderList = () =>
    replace(
      listArea,
      table(
        'API keys',
        ['Name', 'Role', 'Scopes', 'Created', 'Last used', 'State', ''],
        keys.map((k) => [k.name, k.role, k.scopes ? k.scopes.join(', ') : 'all of its role', formatTime(k.createdAt), k.lastUsedAt ? formatTime(k.lastUsedAt) : 'never', k.revokedAt ? `revoked ${formatTime(k.revokedAt)}` : 'active', k.revokedAt ? '' : revokeControl(k)]),
      ),
    );

  const revokeControl = (k: KeyOut): HTMLElement => {
    const holder = h('span', { class: 'revoke' });
    const ask = () =>
      replace(
        holder,
        button(`Confirm revoke ${k.name}`, () => void doRevoke(), { class: 'danger' }),
        ' ',
        button('Cancel', () => replace(holder, first())),
      );
    const first = () => button(`Revoke`, ask, { 'aria-label': `Revoke key ${k.name}` });
    const doRevoke = async () => {
      try {
        await api('DELETE', `/keys/${seg(k.id)}`);
        keys = (await api<KeyOut[]>('GET', '/keys')).data;
        renderList();
        replace(created, notice('ok', `Key ${k.name} revoked: it stops working now.`));
      } catch (err) {
        replace(holder, h('span', { role: 'alert', class: 'field-error' }, describeError(err)), ' ', first());
      }
    };
    holder.append(first());
    return holder;
  };

  const name = h('input', { type: 'text', required: true, name: 'key-name' });
  const role = h('select', { name: 'key-role' }, [...BUILT_IN_ROLES, ...custom].map((r) => h('option', { value: r, selected: r === 'member' }, r)));
  const scopeBoxes = checkboxes('Scopes (none ticked: everything its role allows, within yours)', SCOPES, 'scope');
  const form = h(
    'form',
    { class: 'create-key', 'aria-labelledby': 'create-key-title' },
    h('h2', { id: 'create-key-title' }, 'Create a key'),
    field('Name', name),
    field('Role', role),
    scopeBoxes.element,
    h('button', { type: 'submit' }, 'Create key'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void (async () => {
      const scopes = scopeBoxes.checked();
      try {
        const answer = await api<KeyOut & { secret: string }>('POST', '/keys', { name: name.value.trim(), role: role.value, ...(scopes.length ? { scopes } : {}) });
        const secret = h('input', { type: 'text', readOnly: true, value: answer.data.secret, class: 'mono secret', id: 'new-key-secret' });
        replace(
          created,
          h(
            'div',
            { class: 'notice ok', role: 'status' },
            h('p', null, `Key ${answer.data.name} created. Copy its secret now: it is shown this once and cannot be recovered.`),
            h('label', { for: 'new-key-secret' }, 'Secret'),
            secret,
          ),
        );
        secret.focus();
        secret.select();
        name.value = '';
        keys = (await api<KeyOut[]>('GET', '/keys')).data;
        renderList();
      } catch (err) {
        replace(created, notice('error', describeError(err), err instanceof ApiError && err.errors.length ? h('ul', null, err.errors.map((x) => h('li', null, `${x.path.join('.')}: ${x.message}`))) : null));
      }
    })();
  });
  renderList();
  main.append(created, listArea, form);
}
