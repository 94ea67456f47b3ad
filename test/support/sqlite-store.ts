import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { openSqliteStore } from '../../engine/store/index.js';

export type OpenedSqliteStore = ReturnType<typeof openSqliteStore>;

/**
 * For a test file or describe block: a fresh SQLite store (and its raw connection, to read
 * tables) in a temporary folder before each test, handed to `use`; closed and removed after.
 */
export function freshSqliteStore(prefix: string, use: (opened: OpenedSqliteStore) => void): void {
  let dir: string;
  let opened: OpenedSqliteStore | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    opened = openSqliteStore({ path: join(dir, 'schemasync.db') });
    use(opened);
  });
  afterEach(async () => {
    await opened?.store.close();
    opened = undefined;
    rmSync(dir, { recursive: true, force: true });
  });
}
