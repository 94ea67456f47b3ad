import { seg } from './api.js';
import { h } from './dom.js';
import { formatBytes, labelOf } from './format.js';
import { objectNamed, objects } from './schema.js';
import { notice } from './dom.js';
import { link, pageHeading, table } from './ui.js';
import type { Attribute, Owner } from './types.js';

export const ownerText = (owner: Owner): string => (owner.id ? `${owner.kind}: ${owner.id}` : owner.kind);

/** The constraints of an attribute in words (contract.md §2's fields, whichever it has). */
export function constraintsOf(a: Attribute): string {
  const parts: string[] = [];
  if (a.required) parts.push('required');
  if (a.unique) parts.push('unique');
  if (a.min !== undefined) parts.push(`min ${a.min}`);
  if (a.max !== undefined) parts.push(`max ${a.max}`);
  if (a.minLength !== undefined) parts.push(`minLength ${a.minLength}`);
  if (a.maxLength !== undefined) parts.push(`maxLength ${a.maxLength}`);
  if (a.pattern !== undefined) parts.push(`pattern ${a.pattern}`);
  if (a.options) parts.push(`options: ${a.options.join(', ')}`);
  if (a.target) parts.push(`→ ${a.target}${a.multiple ? ' (many)' : ''}`);
  if (a.type === 'document') {
    parts.push(a.multiple ? 'several files' : 'one file');
    if (a.accepts) parts.push(`accepts ${a.accepts.join(', ')}`);
    if (a.maxFileSize !== undefined) parts.push(`up to ${formatBytes(a.maxFileSize)}`);
  }
  if (a.default !== undefined) parts.push(`default ${JSON.stringify(a.default)}`);
  return parts.join('; ');
}

export async function objectsPage(main: HTMLElement): Promise<void> {
  const list = await objects();
  main.append(
    pageHeading('Objects'),
    list.length === 0
      ? notice('info', 'No objects yet. Declare some in YAML and run schemasync sync (or dev).')
      : table(
          'Objects',
          ['Name', 'Label', 'Owner', 'Protected', 'Attributes', 'Records'],
          list.map((o) => [
            link(`#/objects/${seg(o.name)}`, o.name),
            o.label ?? '',
            ownerText(o.owner),
            o.protected ? 'yes' : 'no',
            String(o.attributes.filter((a) => !a.system).length),
            link(`#/records/${seg(o.name)}`, `Records of ${o.name}`),
          ]),
        ),
  );
}

export async function objectPage(main: HTMLElement, [name = '']: string[]): Promise<void> {
  const o = await objectNamed(name);
  if (!o) {
    main.append(pageHeading('Object not found'), notice('error', `No object named ${name} (or this key may not read it).`));
    return;
  }
  main.append(
    pageHeading(`Object ${o.name}`),
    h('p', null, o.description ?? ''),
    h(
      'dl',
      { class: 'facts' },
      h('dt', null, 'Label'),
      h('dd', null, o.label ?? '—'),
      h('dt', null, 'Owner'),
      h('dd', null, ownerText(o.owner)),
      h('dt', null, 'Protected'),
      h('dd', null, o.protected ? 'yes' : 'no'),
    ),
    h('p', null, link(`#/records/${seg(o.name)}`, `Browse records of ${o.name}`, { class: 'button-link' })),
    h('h2', null, 'Attributes'),
    table(
      `Attributes of ${o.name}`,
      ['Name', 'Label', 'Type', 'Constraints', 'Owner', 'Protected'],
      o.attributes.map((a) => [
        h('code', null, a.name),
        labelOf(a) === a.name ? '' : labelOf(a),
        a.type,
        constraintsOf(a),
        a.system ? 'system' : ownerText(a.owner),
        a.protected ? 'yes' : 'no',
      ]),
    ),
  );
}
