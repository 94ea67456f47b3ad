import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { NoOperationTraceWriter, parseWorkflow } from '@actions/workflow-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from './plan-suite.js';
import { api as rawApi, credentials, start, tempProject, type Running } from './watch-helpers.js';
import { loadWorkflow, runJob, type PullRequest } from './workflow-runner.js';

/**
 * examples/github/schemasync.yml end to end (issue 19): its steps run in order, as the jobs
 * would on a pull request, on a merge and on the nightly schedule, against two real
 * `schemasync serve` processes — staging and prod — with the targets of a project file a
 * team would write (prod protected and reviewed-plans-only). Needs `npm run build`.
 */
const WORKFLOW = resolve(__dirname, '../../examples/github/schemasync.yml');
const DEAL = (extra = '      amount: { type: number }\n') => `objects:\n  deal:\n    attributes:\n      title: { type: text }\n${extra}`;
/** The server's answer, its data read loosely (these assertions check its shape). */
const api = async (...a: Parameters<typeof rawApi>) => (await rawApi(...a)) as { status: number; body: { data: any } };
const COMPANY = 'objects:\n  company:\n    attributes:\n      name: { type: text }\n';

describe('the example GitHub workflow', () => {
  let dir: string;
  let staging: Running;
  let prod: Running;
  let prodUrl: string;
  let prodKey: string;
  let secrets: Record<string, string>;
  const prs: PullRequest[] = [];
  const workflow = loadWorkflow(WORKFLOW);
  const pr = (n: number): PullRequest => {
    let p = prs.find((x) => x.number === n);
    if (!p) prs.push((p = { number: n, labels: [], comments: [], merged: false }));
    return p;
  };
  const job = (name: string, p: PullRequest) => runJob(workflow, name, { cwd: dir, secrets, pr: p, prs });
  const failedStep = (r: Awaited<ReturnType<typeof job>>) => r.steps.find((s) => s.code !== 0);

  beforeAll(async () => {
    dir = tempProject({ 'deal.yaml': DEAL(), 'company.yaml': COMPANY });
    staging = start(['serve', '--port', '0', '--no-rate-limit', '--quiet', '--data', join(dir, 'staging-data')], dir);
    prod = start(['serve', '--port', '0', '--no-rate-limit', '--quiet', '--data', join(dir, 'prod-data')], dir);
    const stagingUrl = (await staging.waitFor(/(http:\/\/127\.0\.0\.1:\d+\/v1)/, 'staging banner'))[1]!;
    prodUrl = (await prod.waitFor(/(http:\/\/127\.0\.0\.1:\d+\/v1)/, 'prod banner'))[1]!;
    prodKey = credentials(join(dir, 'prod-data')).apiKey;
    secrets = { SCHEMASYNC_STAGING_KEY: credentials(join(dir, 'staging-data')).apiKey, SCHEMASYNC_PROD_KEY: prodKey };
    writeFileSync(
      join(dir, 'schemasync.yaml'),
      [
        'source: crm',
        'schema: schema',
        'targets:',
        `  staging: { baseUrl: "${stagingUrl}", apiKeyEnv: STAGING_KEY, allowDestructive: true }`,
        '  prod:',
        `    baseUrl: "${prodUrl}"`,
        '    apiKeyEnv: PROD_KEY',
        '    protect: [company]',
        '    requireSavedPlan: true',
        '    watch: false',
        '',
      ].join('\n'),
    );
  });

  afterAll(async () => {
    for (const s of [staging, prod]) {
      if (s && s.child.exitCode === null) {
        s.child.kill('SIGTERM');
        await s.exited;
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('is a valid workflow by GitHub\'s own parser and schema', () => {
    const parsed = parseWorkflow({ name: 'schemasync.yml', content: readFileSync(WORKFLOW, 'utf8') }, new NoOperationTraceWriter());
    expect(parsed.context.errors.getErrors().map((e) => e.message)).toEqual([]);
    // the parser does find mistakes (a misspelt key)
    const broken = readFileSync(WORKFLOW, 'utf8').replace('runs-on: ubuntu-latest', 'runs_on: ubuntu-latest');
    expect(parseWorkflow({ name: 'x.yml', content: broken }, new NoOperationTraceWriter()).context.errors.getErrors().length).toBeGreaterThan(0);
  });

  it('pull request → one plan comment; merge → staging, then the reviewed plan on prod; history records it', async () => {
    const one = pr(1);
    const review = await job('review', one);
    expect(review.ok, JSON.stringify(review.steps)).toBe(true);
    expect(one.comments).toHaveLength(1);
    expect(one.comments[0]!.body).toMatch(/^<!-- schemasync:plan:crm:prod -->\n### schemasync plan: <code>crm<\/code> on target <code>prod<\/code>/);
    expect(one.comments[0]!.body).toContain('✅ **Ready to apply**: 2 steps');
    expect(review.summary).toContain('schemasync plan');
    // a second push to the same pull request edits that comment, it adds none
    expect((await job('review', one)).ok).toBe(true);
    expect(one.comments).toHaveLength(1);

    one.merged = true;
    const deploy = await job('deploy', one);
    expect(deploy.ok, JSON.stringify(failedStep(deploy))).toBe(true);
    const objects = (await api(prodUrl, prodKey, 'GET', '/schema/objects')).body.data.map((o: { name: string }) => o.name);
    expect(objects).toEqual(expect.arrayContaining(['deal', 'company']));
    const history = (await api(prodUrl, prodKey, 'GET', '/schema/sources/crm/history')).body.data;
    expect(history).toHaveLength(1);
    expect(one.comments[0]!.body).toContain(`<!-- schemasync:planHash:${history[0].planHash} -->`);
  });

  it('a destructive change: the comment names the approval; merged without it prod refuses, with the label it applies exactly that loss', async () => {
    expect((await api(prodUrl, prodKey, 'POST', '/records/deal', { title: 'a', amount: 5 })).status).toBe(201);
    writeFileSync(join(dir, 'schema', 'deal.yaml'), DEAL(''));
    const two = pr(2);
    expect((await job('review', two)).ok).toBe(true);
    const body = two.comments[0]!.body;
    expect(body).toContain('⚠️ **Needs approval**: 1 destructive step');
    expect(body).toMatch(/\| ➖ \| drop_attribute ⚠️ \| <code>deal.amount<\/code> \|.*\| 1 \|/);
    expect(body).toContain('<code>allow-destructive:deal.amount</code>');
    expect(body).toContain('--allow-destructive deal.amount');

    two.merged = true;
    const refused = await job('deploy', two);
    expect(refused.ok).toBe(false);
    expect(failedStep(refused)!.name).toBe('Sync the reviewed plan to production');
    expect(failedStep(refused)!.err).toMatch(/SCHEMA_DESTRUCTIVE_NOT_ALLOWED/);
    expect((await api(prodUrl, prodKey, 'GET', '/schema/objects/deal')).body.data.attributes.map((a: { name: string }) => a.name)).toContain('amount');

    two.labels.push('allow-destructive:deal.amount');
    const applied = await job('deploy', two);
    expect(applied.ok, JSON.stringify(failedStep(applied))).toBe(true);
    const [last] = (await api(prodUrl, prodKey, 'GET', '/schema/sources/crm/history')).body.data;
    expect(last).toMatchObject({ version: 2, destructive: ['deal.amount'], steps: { create: 0, change: 0, drop: 1 } });
    const h = await cli(['history', '--target', 'prod'], dir, { PROD_KEY: prodKey });
    expect(h.out).toMatch(/v2 .* -1 destructive: deal\.amount/);
  });

  it('prod changed after the review (a record written): the merge job stops before syncing', async () => {
    writeFileSync(join(dir, 'schema', 'deal.yaml'), DEAL('      stage: { type: text }\n'));
    const three = pr(3);
    expect((await job('review', three)).ok).toBe(true);
    writeFileSync(join(dir, 'schema', 'deal.yaml'), DEAL('      stage: { type: integer }\n')); // merged a different change
    expect((await api(prodUrl, prodKey, 'POST', '/records/deal', { title: 'b' })).status).toBe(201);
    three.merged = true;
    const deploy = await job('deploy', three);
    expect(deploy.ok).toBe(false);
    expect(failedStep(deploy)!.name).toBe('Plan production again; it must be the reviewed plan');
    expect(failedStep(deploy)!.out).toMatch(/The production plan changed since review/);
    expect((await api(prodUrl, prodKey, 'GET', '/schema/sources/crm')).body.data.version).toBe(2);
    writeFileSync(join(dir, 'schema', 'deal.yaml'), DEAL(''));
  });

  it('protect: dropping a protected object is a conflict in the comment and fails the check, whatever is approved', async () => {
    rmSync(join(dir, 'schema', 'company.yaml'));
    try {
      const four = pr(4);
      four.labels.push('allow-destructive:company');
      const review = await job('review', four);
      expect(review.ok).toBe(false);
      expect(failedStep(review)!.name).toBe('Fail the check on conflicts');
      expect(four.comments[0]!.body).toContain('❌ **Blocked**');
      expect(four.comments[0]!.body).toMatch(/<code>company<\/code>: company is protected on target "prod"/);
      // a saved plan with every loss approved is still refused by sync, before anything is sent
      const out = join(dir, 'drop-company.json');
      expect((await cli(['plan', '--target', 'prod', '--out', out], dir, { PROD_KEY: prodKey })).code).toBe(1);
      const sync = await cli(['sync', '--target', 'prod', '--plan', out, '--yes', '--allow-destructive'], dir, { PROD_KEY: prodKey });
      expect(sync.code).toBe(1);
      expect(sync.err).toMatch(/^Error: 409 SCHEMA_SYNC_CONFLICT: company is protected on target "prod"/m);
      expect((await api(prodUrl, prodKey, 'GET', '/schema/objects/company')).status).toBe(200);
      // --strict: a protect entry naming nothing the files declare fails validate
      expect((await cli(['validate'], dir)).code).toBe(0);
      const strict = await cli(['validate', '--strict'], dir);
      expect(strict.code).toBe(1);
      expect(strict.out + strict.err).toMatch(/schemasync\.yaml:\d+:\d+ error Target "prod" protects "company", which no declaration file declares/);
    } finally {
      writeFileSync(join(dir, 'schema', 'company.yaml'), COMPANY);
    }
  });

  it('nightly drift: quiet when nothing moved; a runtime change fails the run with a classified report', async () => {
    const quiet = await job('drift', pr(0));
    expect(quiet.ok, JSON.stringify(quiet.steps)).toBe(true);
    expect(quiet.summary).toContain('No drift');
    expect((await api(prodUrl, prodKey, 'PUT', '/schema/objects/deal/attributes/title', { label: 'Deal title' })).status).toBe(200);
    writeFileSync(join(dir, 'schema', 'company.yaml'), `${COMPANY}      website: { type: url }\n`);
    const drift = await job('drift', pr(0));
    expect(drift.ok).toBe(false);
    expect(drift.summary).toMatch(/\| runtime \| <code>deal.title<\/code> \|/);
    expect(drift.summary).toMatch(/\| pending \| <code>company.website<\/code> \|/);
    writeFileSync(join(dir, 'schema', 'company.yaml'), COMPANY);
  });
});
