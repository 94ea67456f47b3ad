import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { BlobStore } from '../../engine/store/blobs.js';
import { FileBytes } from '../../engine/store/sql/file-bytes.js';
import { SqliteDriver } from '../../engine/store/sqlite/driver.js';

/**
 * When bytes go (engine/store/sql/file-bytes.ts), with a real database file and a real blob
 * folder. On PostgreSQL two transactions can each delete the last-but-one and the last file
 * row of the same bytes at once; the first to end reads the other's row as still there. The
 * test plays that order on the file rows directly: B's delete becomes visible only when B
 * "commits", after A has ended and read. The property test in test/api/files-concurrency.test.ts
 * found this order on PostgreSQL (bytes left with no row).
 */
let dir: string;
let driver: SqliteDriver;
let blobs: BlobStore;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ss-file-bytes-'));
  driver = new SqliteDriver(join(dir, 'db.sqlite'));
  blobs = new BlobStore(join(dir, 'files'));
});
afterEach(async () => {
  await driver.close();
  rmSync(dir, { recursive: true, force: true });
});

const onDisk = () => [...blobs.digests()].length;
const row = "(?, 'f', 'text/plain', 10, ?, 'k', '2026-01-01T00:00:00.000Z')";
const insert = (id: string, sha: string) => () => driver.run(`INSERT INTO _ss_files (id, name, mime_type, size, sha256, uploaded_by, created_at) VALUES ${row}`, [id, sha]);

/** The rows `ids` names are deleted and their digest checked: with no row left, the bytes go. */
async function lastRowsGo(bytes: FileBytes, sha: string, ids: string[]): Promise<void> {
  await driver.run(`DELETE FROM _ss_files WHERE id IN (${ids.map(() => '?').join(', ')})`, ids);
  bytes.release(sha);
  await bytes.flush(driver);
  expect(onDisk()).toBe(0);
}

async function twoRowsOfOneCopy(bytes: FileBytes): Promise<string> {
  const { sha256 } = await bytes.write(Readable.from([Buffer.from('same bytes')]), { maxBytes: 1024, tooLargeCode: 'PAYLOAD_TOO_LARGE' });
  await bytes.commit(sha256, driver, () => driver.run(`INSERT INTO _ss_files (id, name, mime_type, size, sha256, uploaded_by, created_at) VALUES ${row}, ${row}`, ['a', sha256, 'b', sha256]));
  return sha256;
}

it('two transactions delete the two rows of one copy; the first ends while the other is open: the bytes go when the second ends', async () => {
  const bytes = new FileBytes(blobs);
  const sha = await twoRowsOfOneCopy(bytes);
  expect(onDisk()).toBe(1);
  const a = bytes.begin();
  const b = bytes.begin();
  bytes.release(sha); // B deletes row b (not committed: the row is still read as there)
  await driver.run("DELETE FROM _ss_files WHERE id = 'a'");
  bytes.release(sha); // A deleted row a and commits
  await bytes.ended(a, driver); // A ends: b still reads as used, and B is open
  expect(onDisk()).toBe(1);
  await driver.run("DELETE FROM _ss_files WHERE id = 'b'"); // B commits
  await bytes.ended(b, driver);
  expect(onDisk()).toBe(0);
});

it('a transaction that rolls back its delete keeps the bytes', async () => {
  const bytes = new FileBytes(blobs);
  const sha = await twoRowsOfOneCopy(bytes);
  const t = bytes.begin();
  bytes.release(sha); // deleted row a, then rolled back: both rows stay
  await bytes.ended(t, driver);
  expect(onDisk()).toBe(1);
  await lastRowsGo(bytes, sha, ['a', 'b']);
});

it('a digest read as used waits for the transactions open at that read: the writes after them read nothing for it', async () => {
  const bytes = new FileBytes(blobs);
  const sha = await twoRowsOfOneCopy(bytes);
  let reads = 0;
  const counted = { get: (sql: string, params?: readonly unknown[]) => (reads++, driver.get(sql, params as never)) } as unknown as SqliteDriver;
  const a = bytes.begin();
  const b = bytes.begin();
  await driver.run("DELETE FROM _ss_files WHERE id = 'a'");
  bytes.release(sha);
  await bytes.ended(a, counted);
  expect(reads).toBe(1);
  // A busy server: many writes begin and end while B stays open; none reads the digest.
  for (let i = 0; i < 20; i++) await bytes.ended(bytes.begin(), counted);
  expect(reads).toBe(1);
  await bytes.ended(b, counted); // B ends: read once more, still used (row b), and forgotten
  expect(reads).toBe(2);
  await bytes.ended(bytes.begin(), counted);
  expect(reads).toBe(2);
  expect(onDisk()).toBe(1);
});

/**
 * A flush whose read of the digest of row a (just deleted) began before an upload of the same
 * bytes and answers after it: the answer is what the database held when the read began. The
 * upload's row is written by `commitAgain`; `answer()` lets the read's result arrive.
 */
async function uploadWhileAFlushReads(bytes: FileBytes, commitAgain: (sha: string) => Promise<unknown>): Promise<string> {
  const upload = () => bytes.write(Readable.from([Buffer.from('same bytes')]), { maxBytes: 1024, tooLargeCode: 'PAYLOAD_TOO_LARGE' });
  const { sha256: sha } = await upload();
  await bytes.commit(sha, driver, insert('a', sha));
  await driver.run("DELETE FROM _ss_files WHERE id = 'a'");
  bytes.release(sha);
  let answer!: () => void;
  const arrives = new Promise<void>((r) => (answer = r));
  const slow = { get: async (sql: string, params?: readonly unknown[]) => { const seen = await driver.get(sql, params as never); await arrives; return seen; } } as unknown as SqliteDriver;
  const reading = bytes.flush(slow);
  await upload();
  await commitAgain(sha).catch(() => undefined);
  answer();
  await reading;
  return sha;
}
it('an upload of the same bytes that lands while a flush reads keeps them, though the read began before its row', async () => {
  // Found by test/api/files-concurrency.test.ts on PostgreSQL: a file row left without bytes.
  const bytes = new FileBytes(blobs);
  const sha = await uploadWhileAFlushReads(bytes, (sha) => bytes.commit(sha, driver, insert('b', sha)));
  expect(onDisk()).toBe(1);
  expect(await driver.get("SELECT id FROM _ss_files WHERE sha256 = ?", [sha])).toEqual({ id: 'b' });
  // Nothing kept for good: once row b goes, so do the bytes.
  await lastRowsGo(bytes, sha, ['b']);
});

it('such an upload refused instead: its bytes go at the next flush, not only at the next open', async () => {
  const bytes = new FileBytes(blobs);
  await uploadWhileAFlushReads(bytes, (sha) =>
    bytes.commit(sha, driver, () => {
      throw new Error('refused');
    }),
  );
  // Kept while the read was unsure, decided by the next write's flush.
  await bytes.flush(driver);
  expect(onDisk()).toBe(0);
});
