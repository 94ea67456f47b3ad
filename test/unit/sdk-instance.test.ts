import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveInstance } from '../../cli/instance.js';
import { CliError } from '../../cli/errors.js';

function project(config: string, creds?: object): string {
  const dir = mkdtempSync(join(tmpdir(), 'ss-inst-'));
  writeFileSync(join(dir, 'schemasync.yaml'), config);
  if (creds) {
    mkdirSync(join(dir, '.schemasync'));
    writeFileSync(join(dir, '.schemasync', 'credentials.json'), JSON.stringify(creds));
  }
  return dir;
}

const g = (extra: object = {}) => ({ color: false, ...extra });

describe('resolveInstance (contract §2/§4 precedence)', () => {
  const creds = { baseUrl: 'http://127.0.0.1:1/v1', apiKey: 'local-key' };

  it('flag > env > config > credentials for the URL; flag > env > credentials for the key', () => {
    const cwd = project('source: crm\nbaseUrl: http://config/v1\n', creds);
    const env = { SCHEMASYNC_BASE_URL: 'http://env/v1', SCHEMASYNC_API_KEY: 'env-key' };
    expect(resolveInstance({ cwd, global: g({ baseUrl: 'http://flag/v1', apiKey: 'flag-key' }) }, env)).toEqual({ baseUrl: 'http://flag/v1', apiKey: 'flag-key', from: 'flag' });
    expect(resolveInstance({ cwd, global: g() }, env)).toEqual({ baseUrl: 'http://env/v1', apiKey: 'env-key', from: 'env' });
    expect(resolveInstance({ cwd, global: g() }, {})).toEqual({ baseUrl: 'http://config/v1', apiKey: 'local-key', from: 'config' });
  });

  it('falls back to the local server credentials next to the config', () => {
    const cwd = project('source: crm\n', creds);
    expect(resolveInstance({ cwd, global: g() }, {})).toEqual({ ...creds, from: 'credentials' });
    // a --config elsewhere finds .schemasync beside that config
    expect(resolveInstance({ cwd: tmpdir(), global: g({ config: join(cwd, 'schemasync.yaml') }) }, {}).apiKey).toBe('local-key');
  });

  it('none configured → CliError with exit code 2 and a hint', () => {
    const cwd = project('source: crm\n');
    let err: unknown;
    try {
      resolveInstance({ cwd, global: g() }, {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(2);
    expect((err as CliError).message).toMatch(/No instance configured/);
    expect((err as CliError).hint).toMatch(/schemasync serve/);
  });
});
