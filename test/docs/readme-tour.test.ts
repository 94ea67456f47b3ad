import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { poll } from '../cli/watch-helpers.js';
import { tourSteps, type TourStep } from './tour.js';

/**
 * The README tour, walked as a newcomer would (issue 13 "Done when"): the commands are read
 * from the README itself (the blocks marked `<!-- tour: … -->`, see ./tour.ts), so the
 * guide and this test cannot drift. They run in a temp folder laid out like a clone (the
 * built dist/ and node_modules linked in), with a real `npm start` (`schemasync dev` on a
 * free port: the tour's one change, `-- --port 0`), real CLI child processes and real curl,
 * in one bash session with `set -e`: any command that fails fails the test.
 * Needs `npm run build`. TOUR_TRANSCRIPT=<file> writes what each command printed.
 */
const root = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'ss-tour-'));
const transcript = process.env['TOUR_TRANSCRIPT'];
const note = (text: string): void => {
  if (transcript) appendFileSync(transcript, text);
};

let server: ChildProcess | undefined;
let shell: ChildProcess | undefined;
afterAll(async () => {
  // Each is the leader of a process group this test started (bash; npm, sh and node).
  // The dev loop stops on Ctrl-C (SIGINT) as a user stops it; the shell on SIGTERM.
  for (const [child, signal] of [[shell, 'SIGTERM'], [server, 'SIGINT']] as const) {
    if (child?.pid !== undefined && child.exitCode === null) {
      const gone = new Promise((r) => child.once('exit', r));
      process.kill(-child.pid, signal);
      await gone;
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

function clone(): void {
  for (const d of ['dist', 'node_modules', 'schemas']) symlinkSync(join(root, d), join(dir, d));
  cpSync(join(root, 'bin'), join(dir, 'bin'), { recursive: true });
  cpSync(join(root, 'examples'), join(dir, 'examples'), { recursive: true });
  cpSync(join(root, 'package.json'), join(dir, 'package.json'));
  rmSync(join(dir, 'examples', 'crm', '.schemasync'), { recursive: true, force: true });
}

/** One bash for the whole tour, so `KEY=…` of one block is there in the next, as in a terminal. */
function startShell(): { run(script: string): Promise<string> } {
  const sh = spawn('bash', ['--norc', '--noprofile'], { cwd: dir, detached: true, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  shell = sh;
  let out = '';
  sh.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  sh.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  sh.stdin!.write('set -euo pipefail\n');
  let n = 0;
  return {
    async run(script) {
      const mark = `__tour_step_${++n}__`;
      const from = out.length;
      sh.stdin!.write(`${script}\necho ${mark}\n`);
      await poll(
        () => {
          if (sh.exitCode !== null) throw new Error(`a tour command failed (exit ${sh.exitCode}):\n${script}\n--- output:\n${out.slice(from)}`);
          return out.includes(mark, from) ? true : undefined;
        },
        () => `the tour step to finish:\n${script}\n--- output so far:\n${out.slice(from)}`,
        60_000,
      );
      return out.slice(from, out.indexOf(mark, from));
    },
  };
}

function edit(step: Extract<TourStep, { kind: 'edit' }>): void {
  const file = join(dir, step.file);
  const text = readFileSync(file, 'utf8');
  let next: string;
  if (step.action === 'insert-after') {
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.trimStart().startsWith(step.anchor));
    expect(at, `no line starting with "${step.anchor}" in ${step.file}`).toBeGreaterThanOrEqual(0);
    lines.splice(at + 1, 0, ...step.text.replace(/\n$/, '').split('\n'));
    next = lines.join('\n');
  } else {
    const lines = text.split('\n');
    const kept = lines.filter((l) => !l.trimStart().startsWith(step.anchor));
    expect(kept.length, `no line starting with "${step.anchor}" in ${step.file}`).toBe(lines.length - 1);
    next = kept.join('\n');
  }
  writeFileSync(file, next);
}

it('every command of the README tour works where the README says to run it', async () => {
  const steps = tourSteps(readFileSync(join(root, 'README.md'), 'utf8'));
  expect(steps.filter((s) => s.kind === 'start')).toHaveLength(1);
  expect(steps.filter((s) => s.kind === 'run').length).toBeGreaterThanOrEqual(5);
  clone();
  const sh = startShell();
  let log = '';
  let seen = 0;
  for (const step of steps) {
    if (step.kind === 'start') {
      note(`$ ${step.command}\n`);
      server = spawn('bash', ['-c', `${step.command} -- --port 0`], { cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
      server.stdout!.on('data', (b: Buffer) => (log += b.toString()));
      server.stderr!.on('data', (b: Buffer) => (log += b.toString()));
    } else if (step.kind === 'wait') {
      // from where the last wait matched: each wait is for the next thing the loop prints
      const m = await poll(
        () => {
          if (server?.exitCode !== null) throw new Error(`npm start exited:\n${log}`);
          return new RegExp(step.pattern, 'm').exec(log.slice(seen)) ?? undefined;
        },
        () => `the dev loop to print /${step.pattern}/:\n${log.slice(seen)}`,
      );
      note(`[npm start prints]\n${log.slice(seen, seen + m.index + m[0].length)}\n`);
      seen += m.index + m[0].length;
    } else if (step.kind === 'edit') {
      edit(step);
      note(`[edit ${step.file}: ${step.action} "${step.anchor}"]\n${step.text}`);
    } else {
      const output = await sh.run(step.script);
      note(`$ ${step.script.replace(/\n/g, '\n$ ')}\n${output}\n`);
      for (const want of step.expect) expect(output, `output of:\n${step.script}`).toMatch(new RegExp(want, 'm'));
    }
  }
  note(`--- npm start log ---\n${log}\n`);
}, 180_000);
