import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declarationJsonSchema } from '../../engine/declaration/json-schema.js';
import { validateDeclaration } from '../../engine/declaration/validate.js';
import { ServiceError } from '../../engine/errors.js';
import { SYSTEM_ATTRIBUTES, SYSTEM_ATTRIBUTE_TABLE, SYSTEM_COLUMNS, attributeNameProblem } from '../../engine/model/names.js';
import { openStore } from '../../engine/store/index.js';
import type { Store } from '../../engine/store/types.js';

/**
 * The system attributes have one definition (engine/model/names.ts); every layer that
 * names them reads it. These tests hold each layer to the table, so a copy that drifts
 * (a column added to one list and not another) fails here.
 */
let dir: string;
let store: Store;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'schemasync-system-'));
  store = await openStore({ path: join(dir, 'schemasync.db') });
  await store.createObject({ name: 'deal', attributes: [{ name: 'title', type: 'text' }] }, { kind: 'runtime' });
});

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('system attributes: one table, every layer', () => {
  it('the contract\'s six names, in its order (contract.md §2)', () => {
    expect(SYSTEM_ATTRIBUTES).toEqual(['id', 'object', 'version', 'created_at', 'updated_at', 'created_by']);
  });

  it('every object the store creates carries exactly the table\'s system attributes, with its types, protected', async () => {
    const deal = (await store.findObject('deal'))!;
    const system = deal.attributes.filter((a) => a.system);
    expect(system.map((a) => [a.name, a.type])).toEqual(SYSTEM_ATTRIBUTE_TABLE.map((a) => [a.name, a.type]));
    expect(system.every((a) => a.protected)).toBe(true);
    expect(deal.attributes.filter((a) => !a.system).map((a) => a.name)).toEqual(['title']);
  });

  it('a record carries each system attribute the table gives a record field', async () => {
    const record = await store.createRecord('deal', { title: 'x' }, { keyId: 'k', role: 'owner', scopes: null });
    const fields = SYSTEM_ATTRIBUTE_TABLE.flatMap((a) => (a.recordField ? [a.recordField] : []));
    for (const f of fields) expect(record[f], f).not.toBeUndefined();
    expect(Object.keys(record).sort()).toEqual([...fields, 'values'].sort());
  });

  it('search filters and sorts on every system column, and refuses the one that is not a column', async () => {
    for (const name of SYSTEM_COLUMNS) {
      const page = await store.search('deal', { filter: { [name]: { isNull: false } }, sort: [{ attribute: name, direction: 'desc' }] });
      expect(page.records.length, name).toBeGreaterThan(0);
    }
    const notColumn = SYSTEM_ATTRIBUTE_TABLE.filter((a) => !a.column).map((a) => a.name);
    expect(notColumn).toEqual(['object']);
    await expect(store.search('deal', { filter: { object: 'deal' } })).rejects.toBeInstanceOf(ServiceError);
  });

  it('no system attribute can be declared: name rule, validator, JSON Schema and the store refuse each', async () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    const schema = ajv.compile(declarationJsonSchema());
    for (const name of SYSTEM_ATTRIBUTES) {
      expect(attributeNameProblem(name)?.code, name).toBe('SCHEMA_INVALID_ATTRIBUTE_NAME');
      const decl = { objects: { deal: { attributes: { [name]: { type: 'text' } } } }, views: {} };
      expect(validateDeclaration(decl).diagnostics.some((d) => d.code === 'SCHEMA_INVALID_ATTRIBUTE_NAME'), name).toBe(true);
      expect(schema(decl), name).toBe(false);
      await expect(store.addAttribute('deal', { name, type: 'text' }, { kind: 'runtime' })).rejects.toMatchObject({ code: 'SCHEMA_INVALID_ATTRIBUTE_NAME' });
    }
  });
});
