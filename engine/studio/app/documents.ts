import { api, ApiError, fetchBlob, seg, upload } from './api.js';
import { field, h, notice, replace } from './dom.js';
import { formatBytes, labelOf } from './format.js';
import { button, describeError } from './ui.js';
import type { Attribute, DocumentOut, ObjectInfo, RecordOut } from './types.js';

/**
 * Documents of one record (issue 20): per document attribute, the attached documents with
 * download and rename, and an upload with a progress bar. A file is checked against the
 * attribute's `accepts` and `maxFileSize` before any byte is sent (the same rules the
 * server applies, contract.md §3), and the server's DOCUMENT_* refusals are shown as they
 * come (the single-file rule can only be judged there).
 */
const DEFAULT_MAX_FILE_SIZE = 25 * 1024 * 1024; // contract.md §2: the default maxFileSize

/** `image/*` matches any image type; anything else matches exactly, case aside. */
export function accepted(accepts: readonly string[] | undefined, mimeType: string): boolean {
  if (!accepts || accepts.length === 0) return true;
  const type = mimeType.toLowerCase();
  return accepts.some((entry) => {
    const e = entry.toLowerCase();
    return e.endsWith('/*') ? type.startsWith(e.slice(0, -1)) : e === type;
  });
}

export function documentsSection(o: ObjectInfo, record: RecordOut, onAttached: () => Promise<void>): HTMLElement | null {
  const attributes = o.attributes.filter((a) => a.type === 'document');
  if (attributes.length === 0) return null;
  return h('section', { class: 'documents', 'aria-labelledby': 'documents-title' }, h('h2', { id: 'documents-title' }, 'Documents'), attributes.map((a) => documentAttribute(o, record, a, onAttached)));
}

function documentAttribute(o: ObjectInfo, record: RecordOut, a: Attribute, onAttached: () => Promise<void>): HTMLElement {
  const raw = record.values[a.name];
  let ids: string[] = Array.isArray(raw) ? (raw as string[]) : typeof raw === 'string' ? [raw] : [];
  const list = h('ul', { class: 'doc-list' });
  const status = h('div', { 'aria-live': 'polite' });
  const maxSize = a.maxFileSize ?? DEFAULT_MAX_FILE_SIZE;

  const renderList = async () => {
    if (ids.length === 0) {
      replace(list, h('li', { class: 'muted' }, 'No document yet.'));
      return;
    }
    const docs = await Promise.all(ids.map((id) => api<DocumentOut>('GET', `/documents/${seg(id)}`).then((r) => r.data).catch((err: unknown) => err)));
    replace(
      list,
      docs.map((d, i) => (d instanceof Error || !d ? h('li', null, notice('error', `Document ${ids[i]}: ${describeError(d)}`)) : documentItem(d as DocumentOut))),
    );
  };

  const file = h('input', { type: 'file', accept: a.accepts?.join(',') ?? '', name: `upload-${a.name}` });
  const title = h('input', { type: 'text', name: `title-${a.name}` });
  const progress = h('progress', { max: 100, value: 0, hidden: true, 'aria-label': `Upload progress for ${labelOf(a)}` });
  const progressText = h('span', { class: 'muted' });
  const send = button('Upload', () => void doUpload());

  const doUpload = async () => {
    const chosen = file.files?.[0];
    if (!chosen) {
      replace(status, notice('error', 'Choose a file first.'));
      file.focus();
      return;
    }
    const type = chosen.type || 'application/octet-stream';
    if (!accepted(a.accepts, type)) {
      replace(status, notice('error', `${chosen.name} is ${type}, which ${labelOf(a)} does not accept (accepts ${a.accepts!.join(', ')}). Nothing was sent.`));
      return;
    }
    if (chosen.size > maxSize) {
      replace(status, notice('error', `${chosen.name} is ${formatBytes(chosen.size)}, over ${labelOf(a)}'s limit of ${formatBytes(maxSize)}. Nothing was sent.`));
      return;
    }
    const form = new FormData();
    if (title.value.trim()) form.append('title', title.value.trim());
    form.append('file', chosen, chosen.name);
    progress.hidden = false;
    progress.value = 0;
    send.disabled = true;
    replace(status);
    try {
      const doc = await upload<DocumentOut>(`/upload/${seg(o.name)}/${seg(record.id)}/${seg(a.name)}`, form, (sent, total) => {
        const pct = Math.round((sent / total) * 100);
        progress.value = pct;
        replace(progressText, `${pct}%`);
      });
      progress.value = 100;
      ids = a.multiple ? [...ids, doc.id] : [doc.id];
      file.value = '';
      title.value = '';
      replace(status, notice('ok', `Uploaded ${doc.title}.`));
      await Promise.all([renderList(), onAttached()]);
    } catch (err) {
      progress.hidden = true;
      replace(progressText);
      replace(status, notice('error', err instanceof ApiError && err.code?.startsWith('DOCUMENT_') ? `Refused by the server: ${err.message} (${err.code})` : describeError(err)));
    } finally {
      send.disabled = false;
    }
  };

  void renderList();
  return h(
    'div',
    { class: 'doc-attribute', 'data-attribute': a.name },
    h('h3', null, labelOf(a)),
    h('p', { class: 'muted' }, `${a.multiple ? 'Several files' : 'One file'}; ${a.accepts ? `accepts ${a.accepts.join(', ')}` : 'any type'}; up to ${formatBytes(maxSize)}.`),
    list,
    h('div', { class: 'upload' }, field(`File for ${labelOf(a)}`, file), field('Title (optional)', title), send, progress, progressText),
    status,
  );
}

function documentItem(doc: DocumentOut): HTMLElement {
  const name = h('span', { class: 'doc-title' }, doc.title);
  const status = h('span', { 'aria-live': 'polite' });
  const input = h('input', { type: 'text', value: doc.title });
  const renameForm = h('form', { class: 'rename', hidden: true }, field(`New title for ${doc.title}`, input), h('button', { type: 'submit' }, 'Save title'));
  renameForm.addEventListener('submit', (e) => {
    e.preventDefault();
    void (async () => {
      try {
        const r = await api<DocumentOut>('PATCH', `/documents/${seg(doc.id)}`, { title: input.value });
        doc.title = r.data.title;
        replace(name, r.data.title);
        renameForm.hidden = true;
        replace(status, notice('ok', 'Renamed.'));
      } catch (err) {
        replace(status, notice('error', describeError(err)));
      }
    })();
  });
  const download = button('Download', () => {
    void (async () => {
      try {
        // The bytes need the key, so a plain link would not do: fetch, then hand the blob over.
        const blob = await fetchBlob(`/files/${seg(doc.fileId)}/content`);
        const file = await api<{ name: string }>('GET', `/files/${seg(doc.fileId)}`);
        const a = h('a', { href: URL.createObjectURL(blob), download: file.data.name });
        document.body.append(a);
        a.click();
        a.remove();
        setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
      } catch (err) {
        replace(status, notice('error', describeError(err)));
      }
    })();
  });
  return h(
    'li',
    { 'data-document': doc.id },
    name,
    ' ',
    download,
    ' ',
    button('Rename', () => {
      renameForm.hidden = !renameForm.hidden;
      if (!renameForm.hidden) input.focus();
    }),
    renameForm,
    status,
  );
}
