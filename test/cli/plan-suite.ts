import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, api, attributesOf, tempProject } from './watch-helpers.js';

/**
 * plan / sync / pull end to end (issue 4 "CLI"): the real bin (built dist/) against an
 * instance the caller starts. plan.test.ts runs it against `schemasync serve` over the
 * SQLite store in a child process; sync.test.ts against the routes and the store in process.
 */
export const DEAL = `objects:
  deal:
    attributes:
      title: { type: text, required: true }
      amount: { type: integer }
`;

export async function cli(args: string[], cwd: string, env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

/** Run the bin on a pseudo-terminal (util-linux `script`), answering the confirmation prompt. */
export async function ttyCli(args: string[], cwd: string, env: Record<string, string>, answer: string) {
  const line = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawn('script', ['-qec', line, '/dev/null'], { cwd, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let answered = false;
    const onData = (b: Buffer) => {
      out += b.toString();
      if (!answered && out.includes('[y/N]')) {
        answered = true;
        child.stdin.write(`${answer}\r`);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => resolve({ code, out }));
  });
}

export interface Instance {
  baseUrl: string;
  key: string;
  stop(): Promise<void>;
}

export function defineCliSuite(name: string, startInstance: (dir: string) => Promise<Instance>): void {
  describe(name, () => {
    let dir: string;
    let inst: Instance;
    let baseUrl: string;
    let key: string;
    let env: Record<string, string>;

    beforeAll(async () => {
      dir = tempProject({ 'deal.yaml': DEAL });
      inst = await startInstance(dir);
      baseUrl = inst.baseUrl;
      key = inst.key;
      env = { SCHEMASYNC_BASE_URL: baseUrl, SCHEMASYNC_API_KEY: key };
    });

    afterAll(async () => {
      await inst.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('no instance configured → exit 2 with a clear line', async () => {
      const lone = mkdtempSync(join(tmpdir(), 'ss-none-'));
      writeFileSync(join(lone, 'schemasync.yaml'), 'source: crm\nschema: schema\n');
      const r = await cli(['plan'], lone, { SCHEMASYNC_BASE_URL: '', SCHEMASYNC_API_KEY: '' });
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/No instance configured/);
    });

    it('plan shows + steps and --detailed-exitcode 2; sync applies; plan is then empty with exit 0', async () => {
      const p = await cli(['plan', '--detailed-exitcode'], dir, env);
      expect(p.err).toBe('');
      expect(p.code).toBe(2);
      expect(p.out).toMatch(/\+ object deal \(2 attributes\)/);
      expect(p.out).toMatch(/Plan: 1 to create, 0 to change, 0 to drop\./);

      const s = await cli(['sync'], dir, env);
      expect(s.code, s.err).toBe(0);
      expect(s.out).toMatch(/Applied: source crm is now at version 1/);

      const again = await cli(['plan', '--detailed-exitcode'], dir, env);
      expect(again.code).toBe(0);
      expect(again.out).toMatch(/No changes/);

      // a sync with no steps still records the declaration (here a one-push renamedFrom hint)
      writeFileSync(join(dir, 'schema', 'deal.yaml'), DEAL.replace('title: { type: text, required: true }', 'title: { type: text, required: true, renamedFrom: headline }'));
      const hinted = await cli(['sync'], dir, env);
      expect(hinted.code, hinted.err).toBe(0);
      const src = await api(baseUrl, key, 'GET', '/schema/sources/crm');
      expect(src.body.data).toMatchObject({ version: 1, declaration: { objects: { deal: { attributes: { title: { renamedFrom: 'headline' } } } } } });
      writeFileSync(join(dir, 'schema', 'deal.yaml'), DEAL);
    });

    it('refuses a destructive sync with the code, the steps and the flag; --allow-destructive <target> applies it', async () => {
      await api(baseUrl, key, 'POST', '/records/deal', { title: 'a', amount: 5 });
      writeFileSync(join(dir, 'schema', 'deal.yaml'), DEAL.replace('      amount: { type: integer }\n', ''));
      const plan = await cli(['plan'], dir, env);
      expect(plan.out).toMatch(/- deal\.amount \[destructive: 1 value\]/);

      const refused = await cli(['sync', '--yes'], dir, env);
      expect(refused.code).toBe(1);
      expect(refused.err).toMatch(/Error: 500 SCHEMA_DESTRUCTIVE_NOT_ALLOWED/);
      expect(refused.err).toMatch(/deal\.amount: .*\(1 affected\)/);
      expect(refused.err).toMatch(/--allow-destructive deal\.amount/);

      const other = await cli(['sync', '--allow-destructive', 'deal.title'], dir, env);
      expect(other.code).toBe(1);

      const ok = await cli(['sync', '--allow-destructive', 'deal.amount'], dir, env);
      expect(ok.code, ok.err).toBe(0);
      expect(await attributesOf(baseUrl, key, 'deal')).not.toContain('amount');
    });

    it('--allow-destructive "" is refused; a partial allow lists only the uncovered loss, the fix every loss', async () => {
      const two = `${DEAL.replace('      amount: { type: integer }\n', '')}      x: { type: text }\n      y: { type: text }\n`;
      writeFileSync(join(dir, 'schema', 'deal.yaml'), two);
      expect((await cli(['sync', '--yes'], dir, env)).code).toBe(0);
      await api(baseUrl, key, 'POST', '/records/deal', { title: 'xy', x: 'a', y: 'b' });
      writeFileSync(join(dir, 'schema', 'deal.yaml'), DEAL.replace('      amount: { type: integer }\n', ''));

      const empty = await cli(['sync', '--yes', '--allow-destructive', ''], dir, env);
      expect(empty.code).toBe(1);
      expect(empty.err).toMatch(/--allow-destructive was given an empty list/);
      expect(await attributesOf(baseUrl, key, 'deal')).toEqual(expect.arrayContaining(['x', 'y']));

      const partial = await cli(['sync', '--yes', '--allow-destructive', 'deal.x'], dir, env);
      expect(partial.code).toBe(1);
      expect(partial.err).toMatch(/^  - deal\.y: .*\(1 affected\)$/m);
      expect(partial.err).not.toMatch(/^  - deal\.x:/m);
      expect(partial.err).toMatch(/fix: .*--allow-destructive deal\.x,deal\.y/);
      expect(partial.out).toMatch(/Destructive steps need --allow-destructive \(all\) or --allow-destructive deal\.x,deal\.y/);

      const all = await cli(['sync', '--yes', '--allow-destructive', 'deal.x,deal.y'], dir, env);
      expect(all.code, all.err).toBe(0);
      expect(all.out).not.toMatch(/Destructive steps need/);
      expect(await attributesOf(baseUrl, key, 'deal')).not.toContain('x');
    });

    it('a data conflict exits 1 with the code and the fix', async () => {
      await api(baseUrl, key, 'POST', '/records/deal', { title: 'b' });
      writeFileSync(join(dir, 'schema', 'deal.yaml'), `${DEAL.replace('      amount: { type: integer }\n', '')}      region: { type: text, required: true }\n`);
      const p = await cli(['plan', '--detailed-exitcode'], dir, env);
      expect(p.code).toBe(1);
      expect(p.out).toMatch(/! SCHEMA_SYNC_CONFLICT deal\.region/);
      const s = await cli(['sync', '--yes'], dir, env);
      expect(s.code).toBe(1);
      expect(s.err).toMatch(/Error: 409 SCHEMA_SYNC_CONFLICT/);
      expect(s.err).toMatch(/fix: give deal\.region a default/);
      writeFileSync(join(dir, 'schema', 'deal.yaml'), DEAL.replace('      amount: { type: integer }\n', ''));
    });

    it('--format json and github; --out then sync --plan applies only while the source is unchanged', async () => {
      writeFileSync(join(dir, 'schema', 'deal.yaml'), `${DEAL.replace('      amount: { type: integer }\n', '')}      note: { type: text }\n`);
      const j = await cli(['plan', '--format', 'json'], dir, env);
      const plan = JSON.parse(j.out) as { steps: { action: string; target: string }[]; baseVersion: number };
      expect(plan.steps).toEqual([expect.objectContaining({ action: 'add_attribute', target: 'deal.note' })]);
      const g = await cli(['plan', '--format', 'github'], dir, env);
      expect(g.out).toMatch(/^::notice file=schema\/deal\.yaml,line=\d+,col=\d+,title=add_attribute::/m);

      const out = join(dir, 'plan.json');
      expect((await cli(['plan', '--out', out], dir, env)).code).toBe(0);
      // someone else moves the source on
      writeFileSync(join(dir, 'schema', 'deal.yaml'), `${DEAL.replace('      amount: { type: integer }\n', '')}      other: { type: text }\n`);
      expect((await cli(['sync', '--yes'], dir, env)).code).toBe(0);
      const stale = await cli(['sync', '--plan', out], dir, env);
      expect(stale.code).toBe(1);
      expect(stale.err).toMatch(/changed since the plan was saved/);

      expect((await cli(['plan', '--out', out], dir, env)).code).toBe(0);
      // a plan reviewed against one instance is never applied to another
      const elsewhere = await cli(['sync', '--plan', out], dir, { ...env, SCHEMASYNC_BASE_URL: 'http://127.0.0.1:9/v1' });
      expect(elsewhere.code).toBe(1);
      expect(elsewhere.err).toMatch(/made against .* not http:\/\/127\.0\.0\.1:9\/v1; nothing was sent/);
      const fresh = await cli(['sync', '--plan', out], dir, env);
      expect(fresh.code, fresh.err).toBe(0);

      // same source version, but a runtime edit changes what the push would do
      writeFileSync(join(dir, 'schema', 'deal.yaml'), `${DEAL.replace('      amount: { type: integer }\n', '')}      other: { type: text }\n      later: { type: text }\n`);
      expect((await cli(['plan', '--out', out], dir, env)).code).toBe(0);
      expect((await api(baseUrl, key, 'POST', '/schema/objects/deal/attributes', { name: 'later', type: 'text' })).status).toBe(201);
      const moved = await cli(['sync', '--plan', out], dir, env);
      expect(moved.code).toBe(1);
      expect(moved.err).toMatch(/other steps than the saved plan shows; nothing was applied/);
      expect((await api(baseUrl, key, 'DELETE', '/schema/objects/deal/attributes/later')).status).toBe(200);
    });

    it('in a terminal sync asks first: "n" changes nothing, "y" applies', async () => {
      writeFileSync(join(dir, 'schema', 'deal.yaml'), `${DEAL.replace('      amount: { type: integer }\n', '')}      other: { type: text }\n      asked: { type: text }\n`);
      const no = await ttyCli(['sync'], dir, env, 'n');
      expect(no.out).toMatch(/Apply 1 change to .*\? \[y\/N\]/);
      expect(no.code).toBe(1);
      expect(no.out).toMatch(/Cancelled; nothing was changed/);
      expect(await attributesOf(baseUrl, key, 'deal')).not.toContain('asked');
      const yes = await ttyCli(['sync'], dir, env, 'y');
      expect(yes.code, yes.out).toBe(0);
      expect(await attributesOf(baseUrl, key, 'deal')).toContain('asked');
    });

    it('--diff shows a unified diff of stored vs declared', async () => {
      writeFileSync(join(dir, 'schema', 'deal.yaml'), `${DEAL.replace('      amount: { type: integer }\n', '')}      other: { type: text }\n      extra: { type: boolean }\n`);
      // a label set at runtime is part of what is stored, so the diff shows it going away
      expect((await api(baseUrl, key, 'PUT', '/schema/objects/deal/attributes/title', { label: 'Runtime title' })).status).toBe(200);
      const d = await cli(['plan', '--diff'], dir, env);
      expect(d.out).toMatch(/^\+\s+extra:/m);
      expect(d.out).toMatch(/^-\s+label: Runtime title$/m);
      expect(d.out).toMatch(/^--- stored/m);
    });

    it('pull --runtime writes runtime objects as declarations', async () => {
      const made = await api(baseUrl, key, 'POST', '/schema/objects', { name: 'scratch', label: 'Scratch', attributes: [{ name: 'body', type: 'text', maxLength: 50 }] });
      expect(made.status).toBe(201);
      const target = join(dir, 'runtime');
      const r = await cli(['pull', '--runtime', '--out', target], dir, env);
      expect(r.code, r.err).toBe(0);
      expect(readdirSync(target)).toEqual(['scratch.yaml']);
      const text = readFileSync(join(target, 'scratch.yaml'), 'utf8');
      expect(text).toMatch(/scratch:\n\s+label: Scratch\n\s+attributes:\n\s+body:\n\s+type: text\n\s+maxLength: 50/);
      expect(text).not.toMatch(/created_at|\bid:/);
    });

    it('pull refuses a folder that holds declaration files unless --force', async () => {
      const r = await cli(['pull'], dir, env);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/already holds declaration files \(deal\.yaml\); nothing was written/);
      expect(readdirSync(join(dir, 'schema'))).toEqual(['deal.yaml']);
      const before = readFileSync(join(dir, 'schema', 'deal.yaml'), 'utf8');
      const forced = await cli(['pull', '--force'], dir, env);
      expect(forced.code, forced.err).toBe(0);
      expect(readdirSync(join(dir, 'schema'))).toEqual(['deal.yaml']);
      writeFileSync(join(dir, 'schema', 'deal.yaml'), before);
    });

    it('pull writes the stored schema (a runtime label change included) as YAML that plans to zero changes', async () => {
      expect((await cli(['sync', '--yes'], dir, env)).code).toBe(0);
      const relabel = await api(baseUrl, key, 'PUT', '/schema/objects/deal/attributes/title', { label: 'Headline' });
      expect(relabel.status).toBe(200);
      const target = join(dir, 'pulled');
      const r = await cli(['pull', '--out', target], dir, env);
      expect(r.code, r.err).toBe(0);
      expect(readdirSync(target)).toEqual(['deal.yaml']);
      expect(readFileSync(join(target, 'deal.yaml'), 'utf8')).toMatch(/label: Headline/);
      const clone = mkdtempSync(join(tmpdir(), 'ss-pulled-'));
      writeFileSync(join(clone, 'schemasync.yaml'), `source: crm\nschema: ${target}\nbaseUrl: ${baseUrl}\n`);
      const p = await cli(['plan', '--detailed-exitcode'], clone, { SCHEMASYNC_API_KEY: key });
      expect(p.code, p.out + p.err).toBe(0);
    });
  });
}
