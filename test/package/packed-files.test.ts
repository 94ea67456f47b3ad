import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';

/**
 * What `npm pack` puts in the tarball (the package a user installs), listed by npm itself
 * from the built dist/ (run `npm run build` first). Issue 13: no LICENSE file, and source
 * maps that point at .ts files the package does not contain.
 */
const root = join(import.meta.dirname, '..', '..');

function packedFiles(): string[] {
  const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  const [report] = JSON.parse(r.stdout) as [{ files: { path: string }[] }];
  return report.files.map((f) => f.path);
}

it('ships the MIT LICENSE that package.json names', () => {
  const files = packedFiles();
  expect(files).toContain('LICENSE');
  expect((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { license: string }).license).toBe('MIT');
  expect(readFileSync(join(root, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n/);
});

it('no shipped file points at a source map or source the package lacks', () => {
  const files = new Set(packedFiles());
  const broken: string[] = [];
  for (const file of files) {
    if (file.endsWith('.map')) {
      const map = JSON.parse(readFileSync(join(root, file), 'utf8')) as { sources: string[] };
      for (const s of map.sources) {
        const target = join(file, '..', s);
        if (!files.has(target)) broken.push(`${file} → ${target}`);
      }
    } else if (/\.(c|m)?js$/.test(file) || file.endsWith('.d.ts')) {
      const m = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(readFileSync(join(root, file), 'utf8'));
      if (m && !files.has(join(file, '..', m[1]!))) broken.push(`${file} → ${m[1]}`);
    }
  }
  expect(broken.slice(0, 5)).toEqual([]);
  expect([...files].some((f) => f.startsWith('dist/cli/main.js'))).toBe(true);
});
