/**
 * The one way Studio makes DOM: elements with properties and children, where every string
 * child becomes a text node. Nothing here (or anywhere in Studio) parses a string as HTML, so
 * server data — record values, names, messages, snippets — is always text, never markup
 * (issue 20: a value like `<img src=x onerror=alert(1)>` shows as those characters).
 */
export type Child = Node | string | number | null | undefined | false | Child[];

type Props = {
  [key: string]: unknown;
  class?: string;
  on?: { [event: string]: (event: Event) => void };
};

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props?: Props | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'on') {
      for (const [event, handler] of Object.entries(value as Record<string, (e: Event) => void>)) el.addEventListener(event, handler);
    } else if (key === 'class') {
      el.className = String(value);
    } else if (key.startsWith('aria-') || key.startsWith('data-') || key === 'role' || key === 'for' || key === 'list') {
      el.setAttribute(key, value === true ? 'true' : String(value));
    } else if (key in el) {
      (el as unknown as Record<string, unknown>)[key] = value;
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else if (child instanceof Node) parent.appendChild(child);
    else parent.appendChild(document.createTextNode(String(child)));
  }
}

/** Replace what `parent` holds. */
export function replace(parent: Node, ...children: Child[]): void {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, children);
}

let uid = 0;
/** A fresh element id, so every input gets a label that points at it. */
export const newId = (prefix: string): string => `${prefix}-${++uid}`;

/** A labelled control: the label's `for` names the control's id (accessibility: every input has a name). */
export function field(label: string, control: HTMLElement, ...extra: Child[]): HTMLElement {
  if (!control.id) control.id = newId('f');
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control, ...extra);
}

/** A message for screen readers and eyes alike; `alert` interrupts, `status` waits its turn. */
export function notice(kind: 'error' | 'ok' | 'info', ...children: Child[]): HTMLElement {
  return h('div', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, ...children);
}

/** A group of labelled checkboxes under one legend; `checked()` reads the ticked values. */
export function checkboxes(legend: string, values: readonly string[], name: string, ticked: (v: string) => boolean = () => false) {
  const boxes = values.map((v) => h('input', { type: 'checkbox', value: v, name: `${name}-${v}`, checked: ticked(v) }));
  return {
    element: h('fieldset', { class: 'choices' }, h('legend', null, legend), boxes.map((b) => h('label', { class: 'check' }, b, b.value))),
    checked: (): string[] => boxes.filter((b) => b.checked).map((b) => b.value),
  };
}
