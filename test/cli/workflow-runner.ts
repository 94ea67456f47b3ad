import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { parse } from 'yaml';
import { BIN } from './watch-helpers.js';

/**
 * Runs the jobs of examples/github/schemasync.yml here, step by step, since GitHub itself is
 * not reachable: each `run:` step in bash with the step's env (secrets and step outputs put
 * in for `${{ … }}`), $GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY, and `npx schemasync` being
 * this repo's built bin. `actions/github-script` steps run their script against a small
 * in-memory stand-in for the pull-request API (comments, labels, merged PRs): the one part
 * that cannot run for real. checkout and setup-node have nothing to do here.
 */
export interface PullRequest {
  number: number;
  labels: string[];
  comments: { id: number; body: string; user: { type: string } }[];
  merged: boolean;
}

export interface StepResult {
  name: string;
  code: number;
  out: string;
  err: string;
  skipped?: boolean;
}

export interface JobResult {
  ok: boolean;
  steps: StepResult[];
  summary: string;
}

interface Step {
  name?: string;
  id?: string;
  if?: string;
  uses?: string;
  run?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
}

export function loadWorkflow(file: string): { jobs: Record<string, { if?: string; steps: Step[] }> } {
  return parse(readFileSync(file, 'utf8')) as { jobs: Record<string, { if?: string; steps: Step[] }> };
}

/** A shim folder: `npx schemasync …` runs this repo's bin; `npm install` has nothing to fetch. */
function shims(dir: string): string {
  const bin = join(dir, '.shims');
  if (!existsSync(bin)) {
    mkdirSync(bin);
    writeFileSync(join(bin, 'npx'), `#!/bin/sh\nif [ "$1" = schemasync ]; then shift; exec "${process.execPath}" "${BIN}" "$@"; fi\necho "npx $1 is not available here" >&2; exit 127\n`);
    writeFileSync(join(bin, 'npm'), '#!/bin/sh\n[ "$1" = install ] && exit 0\necho "npm $1 is not available here" >&2; exit 127\n');
    chmodSync(join(bin, 'npx'), 0o755);
    chmodSync(join(bin, 'npm'), 0o755);
  }
  return bin;
}

export async function runJob(
  workflow: ReturnType<typeof loadWorkflow>,
  job: string,
  options: { cwd: string; secrets: Record<string, string>; pr: PullRequest; prs: PullRequest[] },
): Promise<JobResult> {
  const outputs: Record<string, Record<string, string>> = {};
  const steps: StepResult[] = [];
  const summaryFile = join(options.cwd, '.step-summary');
  writeFileSync(summaryFile, '');
  const expr = (text: string): string =>
    text.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_m, e: string) => {
      const secret = /^secrets\.(\w+)$/.exec(e);
      if (secret) return options.secrets[secret[1]!] ?? '';
      const out = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(e);
      if (out) return outputs[out[1]!]?.[out[2]!] ?? '';
      throw new Error(`expression not understood by the test runner: ${e}`);
    });
  const condition = (c: string | undefined): boolean => {
    if (c === undefined) return true;
    const cmp = /^steps\.([\w-]+)\.outputs\.([\w-]+) == '([^']*)'$/.exec(c.trim());
    if (cmp) return (outputs[cmp[1]!]?.[cmp[2]!] ?? '') === cmp[3];
    const files = /^hashFiles\('([^']+)'\) != ''$/.exec(c.trim());
    if (files) return existsSync(join(options.cwd, files[1]!));
    throw new Error(`condition not understood by the test runner: ${c}`);
  };
  let failed = false;
  for (const step of workflow.jobs[job]!.steps) {
    const name = step.name ?? step.uses ?? step.run ?? '?';
    // GitHub runs a step after a failure only with if: failure()/always(); this workflow has none
    if (failed || !condition(step.if)) {
      steps.push({ name, code: 0, out: '', err: '', skipped: true });
      continue;
    }
    const stepOutputs: Record<string, string> = {};
    let result: StepResult;
    if (step.run !== undefined) {
      const outFile = join(options.cwd, '.step-output');
      writeFileSync(outFile, '');
      const env: Record<string, string> = {};
      for (const [k, v] of Object.entries(step.env ?? {})) env[k] = expr(String(v));
      const r = spawnSync('bash', ['-e', '-c', expr(step.run)], {
        cwd: options.cwd,
        encoding: 'utf8',
        env: {
          ...process.env, SCHEMASYNC_BASE_URL: '', SCHEMASYNC_API_KEY: '', SCHEMASYNC_TARGET: '', NO_COLOR: '1', ...env,
          PATH: `${shims(options.cwd)}:${process.env['PATH'] ?? ''}`, GITHUB_OUTPUT: outFile, GITHUB_STEP_SUMMARY: summaryFile, CI: 'true',
        },
      });
      for (const line of readFileSync(outFile, 'utf8').split('\n')) {
        const eq = line.indexOf('=');
        if (eq > 0) stepOutputs[line.slice(0, eq)] = line.slice(eq + 1);
      }
      result = { name, code: r.status ?? 1, out: r.stdout, err: r.stderr };
    } else if (step.uses?.startsWith('actions/github-script@')) {
      result = await githubScript(name, step.with?.['script'] ?? '', options, stepOutputs);
    } else {
      result = { name, code: 0, out: '', err: '' }; // checkout, setup-node: the project is already here
    }
    if (step.id) outputs[step.id] = stepOutputs;
    steps.push(result);
    if (result.code !== 0) failed = true;
  }
  return { ok: !failed, steps, summary: readFileSync(summaryFile, 'utf8') };
}

async function githubScript(name: string, script: string, options: { cwd: string; pr: PullRequest; prs: PullRequest[] }, outputs: Record<string, string>): Promise<StepResult> {
  let failure: string | undefined;
  let nextId = 1000 + options.prs.reduce((n, p) => n + p.comments.length, 0);
  const find = (n: number) => options.prs.find((p) => p.number === n)!;
  const rest = {
    issues: {
      listComments: async (a: { issue_number: number }) => ({ data: find(a.issue_number).comments }),
      createComment: async (a: { issue_number: number; body: string }) => {
        find(a.issue_number).comments.push({ id: nextId++, body: a.body, user: { type: 'Bot' } });
        return { data: {} };
      },
      updateComment: async (a: { comment_id: number; body: string }) => {
        for (const p of options.prs) for (const c of p.comments) if (c.id === a.comment_id) c.body = a.body;
        return { data: {} };
      },
    },
    repos: {
      listPullRequestsAssociatedWithCommit: async () => ({
        data: options.prs.filter((p) => p.number === options.pr.number).map((p) => ({ number: p.number, merged_at: p.merged ? '2026-01-01T00:00:00Z' : null, labels: p.labels.map((l) => ({ name: l })) })),
      }),
    },
  };
  const github = { rest, paginate: async (fn: (a: never) => Promise<{ data: unknown[] }>, a: never) => (await fn(a)).data };
  const context = { repo: { owner: 'acme', repo: 'crm' }, issue: { number: options.pr.number }, sha: 'abc123' };
  const core = { setOutput: (k: string, v: string) => (outputs[k] = String(v)), setFailed: (m: string) => (failure = m) };
  const base = process.cwd();
  process.chdir(options.cwd); // the script reads plan.md relative to the workspace, as on a runner
  try {
    const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (...args: string[]) => (...a: unknown[]) => Promise<unknown>;
    await new AsyncFunction('github', 'context', 'core', 'require', script)(github, context, core, createRequire(join(options.cwd, 'x.js')));
  } catch (e) {
    failure = e instanceof Error ? e.message : String(e);
  } finally {
    process.chdir(base);
  }
  return { name, code: failure === undefined ? 0 : 1, out: '', err: failure ?? '' };
}
