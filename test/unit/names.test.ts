import { describe, expect, it } from 'vitest';
import { ERROR_STATUS, ServiceError, statusForCode } from '../../engine/errors.js';
import { validateDeclaration } from '../../engine/declaration/validate.js';
import { attributeNameProblem, isDeclarableAttributeName, objectNameProblem, sqlIdent } from '../../engine/model/names.js';

describe('name rules', () => {
  it('accepts the contract pattern and refuses everything else with the spec code', () => {
    expect(objectNameProblem('deal')).toBeNull();
    expect(objectNameProblem('a'.repeat(63))).toBeNull();
    for (const bad of ['Deal', '1deal', 'deal-x', '', 'a'.repeat(64), '__proto__', 'd"; drop table x;--']) {
      expect(objectNameProblem(bad)?.code).toBe('SCHEMA_INVALID_OBJECT_NAME');
    }
    expect(objectNameProblem(42)?.code).toBe('SCHEMA_INVALID_OBJECT_NAME');
  });

  it('refuses the framework-native names', () => {
    for (const name of ['skill', 'memory', 'drives', 'artifact', 'meeting']) {
      const e = objectNameProblem(name);
      expect(e?.code).toBe('SCHEMA_RESERVED_OBJECT_NAME');
      expect(e?.status).toBe(400);
    }
  });

  it('refuses malformed and system attribute names', () => {
    expect(attributeNameProblem('amount')).toBeNull();
    expect(attributeNameProblem('Amount')?.code).toBe('SCHEMA_INVALID_ATTRIBUTE_NAME');
    for (const sys of ['id', 'object', 'version', 'created_at', 'updated_at', 'created_by']) {
      expect(attributeNameProblem(sys)?.message).toMatch(/system attribute/);
    }
  });

  it('reserves the filter combinators and, or, not as attribute names (they could never be filtered on)', () => {
    for (const name of ['and', 'or', 'not']) {
      const e = attributeNameProblem(name);
      expect(e?.code).toBe('SCHEMA_INVALID_ATTRIBUTE_NAME');
      expect(e?.status).toBe(400);
      expect(e?.message).toMatch(/reserved.*filter/);
      expect(isDeclarableAttributeName(name)).toBe(false);
    }
    // Names that merely contain them stay valid.
    for (const ok of ['and_more', 'order', 'note', 'nota']) {
      expect(attributeNameProblem(ok)).toBeNull();
      expect(isDeclarableAttributeName(ok)).toBe(true);
    }
    // The declaration validator uses the same rule.
    const result = validateDeclaration({ objects: { deal: { attributes: { or: { type: 'text' }, title: { type: 'text' } } } }, views: {} });
    const errors = result.diagnostics.filter((d) => d.severity === 'error');
    expect(errors.map((d) => [d.code, d.path.join('.')])).toEqual([['SCHEMA_INVALID_ATTRIBUTE_NAME', 'objects.deal.attributes.or']]);
  });

  it('quotes only validated identifiers', () => {
    expect(sqlIdent('rec_deal')).toBe('"rec_deal"');
    expect(() => sqlIdent('x" OR 1=1')).toThrow(/unvalidated/);
  });
});

describe('error table', () => {
  it('maps each code to the status of the spec and unknown codes to 500', () => {
    expect(statusForCode('SCHEMA_SYNC_CONFLICT')).toBe(409);
    expect(statusForCode('SCHEMA_DESTRUCTIVE_NOT_ALLOWED')).toBe(500);
    expect(statusForCode('CONFIGURATION_REQUIRED')).toBe(503);
    expect(statusForCode('AUTH_INVALID_API_KEY')).toBe(401);
    expect(statusForCode('NOT_A_CODE')).toBe(500);
    expect(statusForCode('toString')).toBe(500);
    expect(statusForCode(undefined)).toBe(500);
  });

  it('derives a ServiceError status from its code', () => {
    const e = new ServiceError('SCHEMA_OBJECT_REFERENCED', 'x');
    expect(e.status).toBe(ERROR_STATUS.SCHEMA_OBJECT_REFERENCED);
  });
});
