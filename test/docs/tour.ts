/**
 * The README tour as data: every step is a fenced block or a marker the README carries as
 * an HTML comment (invisible on GitHub), so the test walks exactly what a reader reads.
 *
 *   <!-- tour: start -->                      the next ```sh block: the long-running command
 *   <!-- tour: wait /regex/ -->               wait until the running command prints this
 *   <!-- tour: run -->                        the next ```sh block: run it (set -e)
 *   <!-- tour: run expect /regex/ -->         … and its output must match
 *   <!-- tour: insert-after FILE "start" -->  the next fenced block goes after the line that starts so
 *   <!-- tour: delete-line FILE "start" -->   the line that starts so is deleted
 */
export type TourStep =
  | { kind: 'start'; command: string }
  | { kind: 'wait'; pattern: string }
  | { kind: 'run'; script: string; expect: string[] }
  | { kind: 'edit'; action: 'insert-after' | 'delete-line'; file: string; anchor: string; text: string };

const MARKER = /^<!-- tour: (\S+)(.*?)-->\s*$/;

function blockAfter(lines: string[], from: number): { text: string; end: number } {
  let i = from;
  while (i < lines.length && !lines[i]!.startsWith('```')) {
    if (lines[i]!.trim() !== '') throw new Error(`README line ${from}: a tour marker must be followed by a fenced block`);
    i++;
  }
  const start = i + 1;
  let end = start;
  while (end < lines.length && !lines[end]!.startsWith('```')) end++;
  return { text: `${lines.slice(start, end).join('\n')}\n`, end };
}

const regexes = (args: string): string[] => [...args.matchAll(/\/((?:\\\/|[^/])+)\//g)].map((m) => m[1]!.replace(/\\\//g, '/'));

export function tourSteps(readme: string): TourStep[] {
  const lines = readme.split('\n');
  const steps: TourStep[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = MARKER.exec(lines[i]!);
    if (!m) continue;
    const [, kind, args = ''] = m;
    if (kind === 'start' || kind === 'run') {
      const { text, end } = blockAfter(lines, i + 1);
      // `$ ` prompts and comments are for the reader; the commands are what runs.
      const script = text.split('\n').filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#')).join('\n');
      steps.push(kind === 'start' ? { kind, command: script.trim() } : { kind, script, expect: regexes(args) });
      i = end;
    } else if (kind === 'wait') {
      steps.push({ kind, pattern: regexes(args)[0] ?? '' });
    } else if (kind === 'insert-after' || kind === 'delete-line') {
      const a = /^\s*(\S+)\s+"([^"]+)"\s*$/.exec(args);
      if (!a) throw new Error(`README line ${i + 1}: ${kind} needs FILE "line start"`);
      const block = kind === 'insert-after' ? blockAfter(lines, i + 1) : { text: '', end: i };
      steps.push({ kind: 'edit', action: kind, file: a[1]!, anchor: a[2]!, text: block.text });
      i = block.end;
    } else {
      throw new Error(`README line ${i + 1}: unknown tour marker "${kind}"`);
    }
  }
  return steps;
}
