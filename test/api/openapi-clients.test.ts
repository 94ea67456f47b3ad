import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

/**
 * contract.md §3 "Also served": the document third-party tools read. Each test runs the
 * real tool (Redocly's CLI, openapi-typescript, tsc, openapi-fetch) on the document the
 * live server answers, never on a copy kept in the repo.
 */
const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const bin = (path: string) => join(root, 'node_modules', path);

let server: TestServer;
let doc: Record<string, any>;
let work: string;

beforeAll(async () => {
  server = await startTestServer();
  const res = await fetch(`${server.base}/openapi.json`);
  expect(res.status).toBe(200);
  doc = (await res.json()) as Record<string, any>;
  work = mkdtempSync(join(tmpdir(), 'schemasync-openapi-'));
  writeFileSync(join(work, 'openapi.json'), JSON.stringify(doc));
});

afterAll(async () => {
  await server.close();
  rmSync(work, { recursive: true, force: true });
});

const operations = () =>
  Object.entries(doc['paths'] as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ path, method, op })),
  );

describe('GET /v1/openapi.json', () => {
  test("Redocly's recommended rules: no errors and no warnings", async () => {
    const { stdout } = await run(process.execPath, [bin('@redocly/cli/bin/cli.js'), 'lint', join(work, 'openapi.json'), '--format=json'], {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((e: { stdout: string }) => ({ stdout: e.stdout }));
    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string }[] };
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);

  test('a servers entry for /v1, and paths relative to it', () => {
    expect(doc['servers']).toEqual([expect.objectContaining({ url: '/v1' })]);
    expect(Object.keys(doc['paths'])).toContain('/records/{objectName}');
    expect(Object.keys(doc['paths']).filter((p) => p.startsWith('/v1'))).toEqual([]);
  });

  test('public routes say security: [], the others name both key schemes', () => {
    expect(doc['paths']['/health'].get.security).toEqual([]);
    expect(doc['paths']['/openapi.json'].get.security).toEqual([]);
    expect(doc['paths']['/records/{objectName}'].post.security).toEqual([{ bearerAuth: [] }, { apiKeyHeader: [] }]);
  });

  test('every operation has a unique operationId, 4XX and 5XX answers (the shared error envelope) and x-request-id on every answer', () => {
    const ids = operations().map(({ op }) => op.operationId as string);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { path, method, op } of operations()) {
      expect(op.responses['4XX'], `${method} ${path}`).toEqual({ $ref: '#/components/responses/Error' });
      expect(op.responses['5XX'], `${method} ${path}`).toEqual({ $ref: '#/components/responses/Error' });
      for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
        if (response.$ref) continue;
        expect(response.headers?.['x-request-id'], `${method} ${path} ${status}`).toEqual({ $ref: '#/components/headers/RequestId' });
      }
    }
    expect(doc['components'].responses.Error.headers['x-request-id']).toEqual({ $ref: '#/components/headers/RequestId' });
    expect(doc['components'].responses.Error.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
  });

  test('etag is documented where the server sends it', () => {
    const ok = (path: string, method: string, status: string) => doc['paths'][path][method].responses[status].headers;
    expect(ok('/records/{objectName}/{id}', 'get', '200').etag).toMatchObject({ schema: { type: 'string' } });
    expect(ok('/records/{objectName}/{id}', 'put', '200').etag).toMatchObject({ schema: { type: 'string' } });
  });
});

describe('a typed client generated from the live document', () => {
  test('openapi-typescript default output: search filter and declaration objects have a real shape', async () => {
    const types = astToString(await openapiTS(doc as never));
    writeFileSync(join(work, 'api.d.ts'), types);
    const search = types.slice(types.indexOf('searchRecords: {'));
    expect(search).toMatch(/filter\?: \{/);
    expect(types).not.toMatch(/filter\?: Record<string, never>/);
    expect(types).not.toMatch(/\[key: string\]: Record<string, never>/);
  });

  test('compiles with tsc (strict) and openapi-fetch creates, gets, updates with if-match, searches, bulk-creates and dry-runs a push', async () => {
    // The generated types and a client written against them, compiled together.
    mkdirSync(join(work, 'client'), { recursive: true });
    symlinkSync(join(root, 'node_modules'), join(work, 'client', 'node_modules'), 'dir');
    writeFileSync(join(work, 'client', 'api.d.ts'), readFileSync(join(work, 'api.d.ts')));
    writeFileSync(join(work, 'client', 'client.ts'), CLIENT_SOURCE);
    writeFileSync(join(work, 'client', 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(
      join(work, 'client', 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noUncheckedIndexedAccess: true,
          exactOptionalPropertyTypes: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          types: ['node'],
          skipLibCheck: false,
          outDir: 'out',
        },
        files: ['client.ts', 'api.d.ts'],
      }),
    );
    const tsc = await run(process.execPath, [bin('typescript/bin/tsc'), '-p', join(work, 'client', 'tsconfig.json')], { cwd: join(work, 'client') }).catch(
      (e: { stdout: string; stderr: string }) => ({ stdout: e.stdout, stderr: e.stderr, failed: true }),
    );
    expect(tsc.stdout).toBe('');
    const { stdout } = await run(process.execPath, [join(work, 'client', 'out', 'client.js')], {
      env: { ...process.env, BASE_URL: server.base, API_KEY: server.ownerKey },
    });
    const result = JSON.parse(stdout) as Record<string, unknown>;
    expect(result).toEqual({
      dryRun: { applied: false, steps: 2 },
      push: { applied: true },
      created: { name: 'Acme', employees: 3 },
      etag: '"1"',
      updated: { version: 2, employees: 4 },
      stale: { status: 409, code: 'SCHEMA_CONFLICT' },
      bulk: 2,
      found: ['Acme', 'Globex'],
    });
  }, 90_000);
});

const CLIENT_SOURCE = `
import createClient from 'openapi-fetch';
import type { paths } from './api.js';

const client = createClient<paths>({
  baseUrl: process.env['BASE_URL']!,
  headers: { authorization: \`Bearer \${process.env['API_KEY']}\` },
});
const out: Record<string, unknown> = {};
const declaration = {
  objects: {
    company: {
      label: 'Company',
      attributes: {
        name: { type: 'text' as const, required: true, maxLength: 120 },
        employees: { type: 'integer' as const, min: 0 },
      },
    },
  },
  views: { big: { object: 'company', filter: { employees: { gte: 3 } }, sort: [{ attribute: 'name', direction: 'asc' as const }] } },
};
const dry = await client.PUT('/schema/sources/{id}', { params: { path: { id: 'crm' } }, body: { declaration, dryRun: true } });
if (!dry.data) throw new Error(JSON.stringify(dry.error));
out['dryRun'] = { applied: dry.data.data.applied, steps: (dry.data.data.plan['steps'] as unknown[]).length };
const push = await client.PUT('/schema/sources/{id}', { params: { path: { id: 'crm' } }, body: { declaration } });
if (!push.data) throw new Error(JSON.stringify(push.error));
out['push'] = { applied: push.data.data.applied };

const created = await client.POST('/records/{objectName}', { params: { path: { objectName: 'company' } }, body: { name: 'Acme', employees: 3 } });
if (!created.data) throw new Error(JSON.stringify(created.error));
const id: string = created.data.data.id;
out['created'] = created.data.data.values;

const got = await client.GET('/records/{objectName}/{id}', { params: { path: { objectName: 'company', id } } });
if (!got.data) throw new Error(JSON.stringify(got.error));
const etag = got.response.headers.get('etag');
out['etag'] = etag;

const updated = await client.PUT('/records/{objectName}/{id}', {
  params: { path: { objectName: 'company', id }, header: { 'if-match': etag ?? '*' } },
  body: { employees: 4 },
});
if (!updated.data) throw new Error(JSON.stringify(updated.error));
out['updated'] = { version: updated.data.data.version, employees: updated.data.data.values['employees'] };

const stale = await client.PUT('/records/{objectName}/{id}', {
  params: { path: { objectName: 'company', id }, header: { 'if-match': '"1"' } },
  body: { employees: 5 },
});
const code: string | undefined = stale.error?.code;
out['stale'] = { status: stale.response.status, code };

const bulk = await client.POST('/records/{objectName}/bulk-create', {
  params: { path: { objectName: 'company' } },
  body: { records: [{ name: 'Globex', employees: 40 }, { name: 'Initech', employees: 2 }] },
});
if (!bulk.data) throw new Error(JSON.stringify(bulk.error));
out['bulk'] = bulk.data.data.records.length;

const found = await client.POST('/records/{objectName}/search', {
  params: { path: { objectName: 'company' } },
  body: { filter: { employees: { gte: 3 } }, sort: [{ attribute: 'name', direction: 'asc' }], limit: 10 },
});
if (!found.data) throw new Error(JSON.stringify(found.error));
out['found'] = found.data.data.map((r) => r.values['name']);
process.stdout.write(JSON.stringify(out));
`;
