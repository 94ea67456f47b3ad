import type { Declaration } from '../../model/declaration.js';
import type { StoredSource } from '../../model/stored.js';
import type { Executor } from '../port.js';

interface SourceHead {
  version: number;
  applied_at: string | null;
}

/**
 * Parsed declarations by source (`_ss_sources`), reused while (version, appliedAt) is
 * unchanged: a big one takes ms to parse. Every read checks the head row first, so a push
 * from another process (or a rolled-back one) is never answered from the cache; the pushed
 * declaration handed over (PushOptions.handOver) is kept under the (version, appliedAt) its
 * own transaction wrote, which a rollback does not leave in the table.
 */
export class SourceCache {
  private readonly parsed = new Map<string, StoredSource>();

  async find(ex: Executor, id: string): Promise<StoredSource | undefined> {
    const head = await ex.get<SourceHead>('SELECT version, applied_at FROM _ss_sources WHERE id = ?', [id]);
    if (!head) return undefined;
    const cached = this.parsed.get(id);
    if (cached && cached.version === head.version && cached.appliedAt === head.applied_at) return { ...cached };
    const row = await ex.get<{ declaration: string }>('SELECT declaration FROM _ss_sources WHERE id = ?', [id]);
    const source: StoredSource = { id, version: head.version, appliedAt: head.applied_at, declaration: JSON.parse(row!.declaration) as Declaration };
    this.parsed.set(id, source);
    // Callers get their own top-level object; the declaration inside is shared and read-only.
    return { ...source };
  }

  /** After a push that handed its declaration over: find answers with it while the row holds what this push wrote. */
  async remember(ex: Executor, id: string, declaration: Declaration): Promise<void> {
    const head = await ex.get<SourceHead>('SELECT version, applied_at FROM _ss_sources WHERE id = ?', [id]);
    if (head) this.parsed.set(id, { id, version: head.version, appliedAt: head.applied_at, declaration });
  }
}
