import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

/**
 * contract.md §2: editors using yaml-language-server complete and check declaration files
 * with the shipped JSON Schema. This runs the real server (the npm package) over stdio,
 * speaking LSP as an editor does, on fixture files that point at schemas/ with the
 * modeline docs/integrations.md tells users to write.
 */
const root = join(import.meta.dirname, '..', '..');
const schemaUri = pathToFileURL(join(root, 'schemas', 'declaration.schema.json')).href;
const MODELINE = `# yaml-language-server: $schema=${schemaUri}\n`;

interface Message {
  id?: number;
  method?: string;
  params?: any;
  result?: any;
  error?: unknown;
}

/** A minimal LSP client: Content-Length framing, requests with ids, notifications collected. */
class LspClient {
  private buffer = Buffer.alloc(0);
  private nextId = 1;
  private pending = new Map<number, (m: Message) => void>();
  private listeners: ((m: Message) => void)[] = [];
  readonly notifications: Message[] = [];

  constructor(private child: ChildProcessWithoutNullStreams) {
    child.stdout.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      for (;;) {
        const end = this.buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/Content-Length: (\d+)/i.exec(this.buffer.subarray(0, end).toString())?.[1]);
        if (this.buffer.length < end + 4 + length) return;
        const message = JSON.parse(this.buffer.subarray(end + 4, end + 4 + length).toString()) as Message;
        this.buffer = this.buffer.subarray(end + 4 + length);
        this.receive(message);
      }
    });
  }

  private receive(m: Message): void {
    if (m.id !== undefined && m.method) {
      // A request from the server: settings for `workspace/configuration`, null for the rest.
      const result = m.method === 'workspace/configuration' ? (m.params.items as unknown[]).map(() => SETTINGS.yaml) : null;
      this.send({ id: m.id, result });
    } else if (m.id !== undefined) {
      this.pending.get(m.id)?.(m);
      this.pending.delete(m.id);
    } else {
      this.notifications.push(m);
      for (const l of this.listeners) l(m);
    }
  }

  send(m: object): void {
    const body = JSON.stringify({ jsonrpc: '2.0', ...m });
    this.child.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  }

  request(method: string, params: unknown): Promise<any> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, (m) => (m.error ? reject(new Error(JSON.stringify(m.error))) : resolve(m.result)));
      this.send({ id, method, params });
    });
  }

  notify(method: string, params: unknown): void {
    this.send({ method, params });
  }

  /** The diagnostics published for a document (the first non-empty set, or empty after a quiet period). */
  diagnostics(uri: string): Promise<any[]> {
    return new Promise((resolve) => {
      const seen = this.notifications.find((n) => n.method === 'textDocument/publishDiagnostics' && n.params.uri === uri);
      if (seen) return resolve(seen.params.diagnostics);
      this.listeners.push((n) => {
        if (n.method === 'textDocument/publishDiagnostics' && n.params.uri === uri) resolve(n.params.diagnostics);
      });
    });
  }
}

const SETTINGS = { yaml: { validate: true, completion: true, hover: true, schemaStore: { enable: false }, format: { enable: false } } };

let child: ChildProcessWithoutNullStreams;
let lsp: LspClient;
let dir: string;
let version = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'schemasync-yls-'));
  child = spawn(process.execPath, [join(root, 'node_modules', 'yaml-language-server', 'bin', 'yaml-language-server'), '--stdio'], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  lsp = new LspClient(child);
  await lsp.request('initialize', {
    processId: process.pid,
    rootUri: pathToFileURL(dir).href,
    capabilities: { workspace: { configuration: true }, textDocument: { completion: { completionItem: { snippetSupport: false } } } },
  });
  lsp.notify('initialized', {});
  lsp.notify('workspace/didChangeConfiguration', { settings: SETTINGS });
}, 60_000);

afterAll(async () => {
  await lsp.request('shutdown', null).catch(() => undefined);
  lsp.notify('exit', null);
  child.kill();
  rmSync(dir, { recursive: true, force: true });
});

/** Opens a fixture (the modeline first) and returns its URI. */
function open(name: string, body: string): string {
  const text = MODELINE + body;
  writeFileSync(join(dir, name), text);
  const uri = pathToFileURL(join(dir, name)).href;
  lsp.notify('textDocument/didOpen', { textDocument: { uri, languageId: 'yaml', version: ++version, text } });
  return uri;
}

/** Completion labels at the line holding `|` (1-based over the body, the modeline not counted), at its column. */
async function completeAt(name: string, bodyWithCursor: string): Promise<string[]> {
  const lines = bodyWithCursor.split('\n');
  const line = lines.findIndex((l) => l.includes('|'));
  const character = lines[line]!.indexOf('|');
  const uri = open(name, bodyWithCursor.replace('|', ''));
  await lsp.diagnostics(uri);
  const result = await lsp.request('textDocument/completion', { textDocument: { uri }, position: { line: line + 1, character } });
  const items = (Array.isArray(result) ? result : result.items) as { label: string }[];
  return items.map((i) => i.label);
}

describe('yaml-language-server with schemas/declaration.schema.json', () => {
  test('inside a boolean attribute it completes the common fields only: no minLength, options or min', async () => {
    const labels = await completeAt('boolean.yaml', 'objects:\n  deal:\n    attributes:\n      done:\n        type: boolean\n        |\n');
    expect(labels).toEqual(expect.arrayContaining(['label', 'required', 'default']));
    expect(labels).not.toContain('minLength');
    expect(labels).not.toContain('options');
    expect(labels).not.toContain('min');
  }, 60_000);

  test('inside a text attribute it completes the length fields; inside a select, options', async () => {
    const text = await completeAt('text.yaml', 'objects:\n  deal:\n    attributes:\n      title:\n        type: text\n        |\n');
    expect(text).toEqual(expect.arrayContaining(['minLength', 'maxLength', 'pattern']));
    expect(text).not.toContain('options');
    const select = await completeAt('select.yaml', 'objects:\n  deal:\n    attributes:\n      stage:\n        type: select\n        |\n');
    expect(select).toContain('options');
    expect(select).not.toContain('maxLength');
  }, 60_000);

  test('a typo in the type, a field of another type, a system attribute and a reserved object name each get a diagnostic on their line', async () => {
    const uri = open(
      'wrong.yaml',
      [
        'objects:',
        '  deal:',
        '    attributes:',
        '      amount:',
        '        type: nuber', // line 5 of the body
        '      done:',
        '        type: boolean',
        '        minLength: 3', // line 8
        '      id:', // line 9
        '        type: text',
        '  skill:', // line 11
        '    attributes:',
        '      a: { type: text }',
        '',
      ].join('\n'),
    );
    const diagnostics = await lsp.diagnostics(uri);
    // Lines are 0-based and the modeline is line 0, so body line n is n.
    const on = (line: number) => diagnostics.filter((d: { range: { start: { line: number } } }) => d.range.start.line === line).map((d: { message: string }) => d.message);
    expect(on(5).join(' ')).toMatch(/nuber|not accepted|Valid values/i);
    expect(on(8).join(' ')).toMatch(/minLength.*not allowed/i);
    expect(on(9).length, JSON.stringify(diagnostics)).toBeGreaterThan(0);
    expect(on(11).length, JSON.stringify(diagnostics)).toBeGreaterThan(0);
    // Nothing is reported on the lines that are right.
    expect(on(4)).toEqual([]);
    expect(on(7)).toEqual([]);
  }, 60_000);

  test('the crm example has no diagnostics', async () => {
    const uri = open(
      'clean.yaml',
      'objects:\n  deal:\n    attributes:\n      title: { type: text, required: true, maxLength: 120 }\n      stage: { type: select, options: [lead, won], default: lead }\n      done: { type: boolean, default: false }\n',
    );
    expect(await lsp.diagnostics(uri)).toEqual([]);
  }, 60_000);
});
