import fc from 'fast-check';
import { Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { readRows } from '../../cli/records/read.js';
import { RecordShape } from '../../cli/records/shape.js';

// `records import` splits NDJSON itself, a chunk at a time (cli/records/read.ts), where it used
// node:readline line by line. The line numbers in every message, and the text each idempotency
// key hashes, must stay what readline gave: same breaks (\n, \r\n, a lone \r), blank lines
// counted but not rows, a last line without a break, characters split across reads.
const shape = new RecordShape({ id: 'o', name: 'item', label: 'item', owner: { kind: 'runtime' }, attributes: [{ name: 'title', type: 'text' }] } as never);

const chunked = (bytes: Buffer, size: number) =>
  Readable.from((function* () {
    for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
  })());

async function ours(bytes: Buffer, size: number): Promise<string[]> {
  const out: string[] = [];
  for await (const run of readRows(chunked(bytes, size), 'ndjson', shape, { ignored: new Set() })) for (const r of run) out.push(`${r.line} ${r.seq} ${r.text}`);
  return out;
}

async function readline(bytes: Buffer): Promise<string[]> {
  const out: string[] = [];
  let line = 0;
  let seq = 0;
  for await (const text of createInterface({ input: Readable.from([bytes]), crlfDelay: Infinity })) {
    line++;
    if (text.trim() !== '') out.push(`${line} ${seq++} ${text}`);
  }
  return out;
}

const lineText = fc.oneof(
  fc.constant(''),
  fc.constant('  '),
  fc.string({ unit: fc.constantFrom('a', 'é', '😀', '€') }).map((t) => JSON.stringify({ title: t })),
  fc.constant('{"title":'),
);
const breakText = fc.constantFrom('\n', '\r\n', '\r');

describe('NDJSON lines read a chunk at a time', () => {
  it('give the lines, numbers and texts node:readline gives, however the file is cut into reads', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(lineText, breakText), { maxLength: 12 }), fc.boolean(), fc.integer({ min: 1, max: 9 }), async (parts, trailing, size) => {
        let text = parts.map(([l, b]) => l + b).join('');
        if (!trailing && parts.length > 0) text = text.slice(0, -parts[parts.length - 1]![1].length);
        const bytes = Buffer.from(text, 'utf8');
        expect(await ours(bytes, size)).toEqual(await readline(bytes));
      }),
      { numRuns: 400 },
    );
  });
});

describe('CSV: a read error before the parser is there', () => {
  // readCsv loads csv-parse when the first CSV row is asked for, and the file's stream is
  // piped to it only after that import. A read error in between (a file that fails at once)
  // must end the rows with that error — not go out as an 'error' event nobody listens to,
  // which would end the whole process.
  it('ends the rows with the error the file gave', async () => {
    const input = new Readable({ read() {} });
    const rows = readRows(input, 'csv', shape, { ignored: new Set() });
    const first = rows.next();
    // Emitted on the next tick, while the generator waits for csv-parse.
    input.destroy(Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' }));
    await expect(first).rejects.toThrow('EIO: i/o error, read');
  });
});
