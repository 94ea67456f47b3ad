import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from './plan-suite.js';
import { api, start, tempProject, type Running } from './watch-helpers.js';

/**
 * `--json` is "one JSON document on stdout" (contract.md §4) for failures too, and the
 * smaller wording fixes of plan/sync output. Against `schemasync serve`; needs `npm run build`.
 */
const ONE = `objects:\n  item:\n    attributes:\n      name: { type: text }\n`;
const DOWN = 'http://127.0.0.1:1/v1';

function doc(out: string): { applied?: boolean; error?: { status?: number; code?: string; message: string; diagnostics?: unknown[] } } {
  return JSON.parse(out) as never;
}

describe('--json failures print one document; plan wording', () => {
  let dir: string;
  let server: Running;
  let baseUrl: string;
  let key: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = tempProject({ 'item.yaml': ONE });
    server = start(['serve', '--port', '0', '--no-rate-limit', '--quiet', '--data', join(dir, '.schemasync')], dir);
    baseUrl = (await server.waitFor(/(http:\/\/127\.0\.0\.1:\d+\/v1)/, 'the server banner'))[1]!;
    key = (JSON.parse(readFileSync(join(dir, '.schemasync', 'credentials.json'), 'utf8')) as { apiKey: string }).apiKey;
    env = { SCHEMASYNC_BASE_URL: baseUrl, SCHEMASYNC_API_KEY: key };
  });

  afterAll(async () => {
    if (server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('an unreachable instance: plan, sync, pull and keys print the error document, exit 1', async () => {
    for (const args of [['plan'], ['sync', '--yes'], ['pull', '--out', join(dir, 'nowhere')], ['keys', 'list']]) {
      const r = await cli(['--base-url', DOWN, '--json', ...args], dir, env);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.err).toMatch(/^Error: could not connect to http:\/\/127\.0\.0\.1:1\/v1$/m);
      const d = doc(r.out);
      expect(d.error).toMatchObject({ status: 0, message: expect.stringMatching(/Could not connect/) });
      // sync's failures say what its refusals say: nothing was applied
      if (args[0] === 'sync') expect(d.applied).toBe(false);
      else expect(d).not.toHaveProperty('applied');
    }
    const f = await cli(['--base-url', DOWN, 'plan', '--format', 'json'], dir, env);
    expect(f.code).toBe(1);
    expect(doc(f.out).error).toMatchObject({ status: 0 });
  });

  it('a service refusal (unknown key) keeps its status and code in the document', async () => {
    const r = await cli(['--json', 'keys', 'revoke', 'no-such-key'], dir, env);
    expect(r.code).toBe(1);
    const d = doc(r.out);
    expect(d.error?.status).toBeGreaterThanOrEqual(400);
    expect(typeof d.error?.code).toBe('string');
  });

  it('no instance (exit 2), no project file and declaration errors are documents too', async () => {
    const lone = mkdtempSync(join(tmpdir(), 'ss-json-'));
    try {
      writeFileSync(join(lone, 'schemasync.yaml'), 'source: crm\nschema: schema\n');
      const none = await cli(['--json', 'plan'], lone, { SCHEMASYNC_BASE_URL: '', SCHEMASYNC_API_KEY: '' });
      expect(none.code).toBe(2);
      expect(doc(none.out).error?.message).toMatch(/No instance configured/);

      // A project file that is not YAML is named at its line, not taken for no instance.
      writeFileSync(join(lone, 'schemasync.yaml'), 'source: crm\nschema: schema\nbaseUrl: http://127.0.0.1:9/v1\ntargets:\n  prod: { baseUrl: "http://x"\n');
      for (const args of [['plan'], ['--json', 'plan']]) {
        const broken = await cli(args, lone, { SCHEMASYNC_BASE_URL: '', SCHEMASYNC_API_KEY: 'k' });
        expect(broken.code).toBe(1);
        const message = args[0] === '--json' ? doc(broken.out).error?.message : broken.err;
        expect(message).toMatch(/^(Error: )?schemasync\.yaml:6:1 YAML syntax error: /);
      }

      // A usage error (commander's) is a document too, and still exits 1.
      const usage = await cli(['--json', 'plan', '--bogus'], lone, { SCHEMASYNC_BASE_URL: '', SCHEMASYNC_API_KEY: '' });
      expect(usage.code).toBe(1);
      expect(doc(usage.out).error).toEqual({ code: 'commander.unknownOption', message: "unknown option '--bogus'" });
      expect(usage.err).toContain("error: unknown option '--bogus'");

      const missing = await cli(['--json', 'validate', '--config', join(lone, 'nope.yaml')], lone);
      expect(missing.code).toBe(1);
      expect(doc(missing.out).error?.message).toMatch(/No project file/);
    } finally {
      rmSync(lone, { recursive: true, force: true });
    }

    writeFileSync(join(dir, 'schema', 'item.yaml'), ONE.replace('type: text', 'type: bogus'));
    try {
      const bad = await cli(['--json', 'sync', '--yes'], dir, env);
      expect(bad.code).toBe(1);
      const d = doc(bad.out);
      expect(d).toMatchObject({ applied: false, error: { message: expect.stringMatching(/declaration has errors/) } });
      expect(d.error?.diagnostics).toEqual([expect.objectContaining({ severity: 'error', file: 'schema/item.yaml', line: 4 })]);
    } finally {
      writeFileSync(join(dir, 'schema', 'item.yaml'), ONE);
    }
  });

  it('after a declaration error, plan and sync count what was read as validate does', async () => {
    writeFileSync(join(dir, 'schema', 'item.yaml'), `${ONE.replace('type: text', 'type: bogus')}views:\n  v:\n    object: item\n    columns: [name]\n`);
    try {
      const v = await cli(['validate'], dir, env);
      expect(v.out).toMatch(/✖ 1 error \(1 file, 1 object, 1 view\)/);
      for (const cmd of ['plan', 'sync']) {
        const r = await cli([cmd], dir, env);
        expect(r.code).toBe(1);
        expect(r.err, cmd).toMatch(/✖ 1 error \(1 file, 1 object, 1 view\)/);
      }
    } finally {
      writeFileSync(join(dir, 'schema', 'item.yaml'), ONE);
    }
  });

  it('one attribute is "1 attribute"; --diff says there is no text difference instead of a bare header', async () => {
    const p = await cli(['plan'], dir, env);
    expect(p.out).toMatch(/^  \+ object item \(1 attribute\)$/m);
    expect((await cli(['sync', '--yes'], dir, env)).code).toBe(0);

    // a runtime attribute on the object: nothing in the declaration text differs
    expect((await api(baseUrl, key, 'POST', '/schema/objects/item/attributes', { name: 'rt', type: 'text' })).status).toBe(201);
    const d = await cli(['plan', '--diff'], dir, env);
    expect(d.code, d.err).toBe(0);
    expect(d.out).not.toMatch(/^(---|\+\+\+|={10,})/m);
    expect(d.out).toMatch(/^No differences between the stored and the declared YAML \(crm v1\)\.$/m);
  });
});
