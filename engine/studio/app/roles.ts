import { api, seg } from './api.js';
import { checkboxes, field, h, notice, replace } from './dom.js';
import { objects } from './schema.js';
import { button, describeError, errorNotice, pageHeading, table } from './ui.js';

/**
 * Roles (contract.md §3 "Roles, keys, views"): the built-in ones are fixed; custom roles
 * are created and deleted here by keys that may manage them.
 */
interface RoleOut {
  id?: string;
  name: string;
  label?: string;
  builtIn?: boolean;
  schema?: string;
  permissions?: { object: string; actions: string[] }[];
}

const ACTIONS = ['read', 'create', 'update', 'delete'];

export async function rolesPage(main: HTMLElement): Promise<void> {
  main.append(pageHeading('Roles'));
  let roles: RoleOut[];
  try {
    roles = (await api<RoleOut[]>('GET', '/roles')).data;
  } catch (err) {
    main.append(errorNotice(err));
    return;
  }
  const listArea = h('div');
  const status = h('div', { 'aria-live': 'polite' });
  const reload = async () => {
    roles = (await api<RoleOut[]>('GET', '/roles')).data;
    render();
  };
  const render = () =>
    replace(
      listArea,
      table('Roles', ['Name', 'Schema', 'Permissions', ''], roles.map((r) => [
        r.name,
        r.schema ?? '',
        (r.permissions ?? []).map((p) => `${p.object}: ${p.actions.join(', ')}`).join('; '),
        r.builtIn || ['owner', 'admin', 'member', 'viewer'].includes(r.name)
          ? 'built in'
          : button('Delete', () => {
              void api('DELETE', `/roles/${seg(r.id ?? r.name)}`).then(reload, (err: unknown) => replace(status, notice('error', describeError(err))));
            }, { 'aria-label': `Delete role ${r.name}` }),
      ])),
    );

  const names = (await objects().catch(() => [])).map((o) => o.name);
  const name = h('input', { type: 'text', required: true, name: 'role-name' });
  const schema = h('select', { name: 'role-schema' }, ['none', 'read', 'write'].map((s) => h('option', { value: s }, s)));
  const object = h('select', { name: 'role-object' }, ['*', ...names].map((n) => h('option', { value: n }, n === '*' ? '* (every object)' : n)));
  const actionBoxes = checkboxes('Actions on that object', ACTIONS, 'action', (a) => a === 'read');
  const form = h(
    'form',
    { class: 'create-role', 'aria-labelledby': 'create-role-title' },
    h('h2', { id: 'create-role-title' }, 'Create a role'),
    field('Name', name),
    field('Schema access', schema),
    field('Object', object),
    actionBoxes.element,
    h('button', { type: 'submit' }, 'Create role'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const body = {
      name: name.value.trim(),
      schema: schema.value,
      permissions: [{ object: object.value, actions: actionBoxes.checked() }],
    };
    void api('POST', '/roles', body).then(
      async () => {
        replace(status, notice('ok', `Role ${body.name} created.`));
        await reload();
      },
      (err: unknown) => replace(status, notice('error', describeError(err))),
    );
  });
  render();
  main.append(status, listArea, form);
}
