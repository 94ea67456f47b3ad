import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * A consumer of the package (`npm install schemasync`, or the packed tarball) resolves the
 * dependency ranges package.json ships, without this repo's `overrides` (npm applies those
 * only to the root project). So the tree this repo locks must come from those ranges alone,
 * and every production package in it must accept the lowest Node the package supports.
 * The full proof — pack, install the tarball into a fresh project, no EBADENGINE — is
 * scripts/check-consumer-install.mjs (it needs the registry, so it is not part of npm test).
 */
const root = join(import.meta.dirname, '..', '..');
const require = createRequire(import.meta.url);
const semver = require('semver') as { satisfies(v: string, range: string): boolean; minVersion(range: string): { version: string } | null };
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, unknown> & { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; dev?: boolean; engines?: { node?: string } | string[] }>;
};

describe('what a consumer installs runs on the Node this package supports', () => {
  it('package.json carries no overrides or resolutions: a consumer would never see them', () => {
    expect(pkg).not.toHaveProperty('overrides');
    expect(pkg).not.toHaveProperty('resolutions');
  });

  it('every production package of the locked tree accepts the lowest supported Node', () => {
    const lowest = semver.minVersion(pkg.engines.node)!.version;
    expect(lowest).toBe('20.19.0');
    const refused = Object.entries(lock.packages)
      .filter(([path, p]) => path !== '' && p.dev !== true)
      .flatMap(([path, p]) => {
        const range = Array.isArray(p.engines) ? undefined : p.engines?.node;
        return range !== undefined && !semver.satisfies(lowest, range) ? [`${path}@${p.version} needs node ${range}`] : [];
      });
    expect(refused).toEqual([]);
  });
});
