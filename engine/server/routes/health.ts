import type { FastifyInstance } from 'fastify';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ok } from '../envelope.js';
import { healthSchema } from '../schemas/admin.js';

/** The package version, found upward from here (works from dist/ and from the sources under test). */
export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'schemasync' && pkg.version) return pkg.version;
    }
    dir = dirname(dir);
  }
  return '0.0.0';
}

/** GET /v1/health: open, exempt from rate limits (contract.md §3). */
export async function healthRoutes(app: FastifyInstance): Promise<void> {
  const version = packageVersion();
  app.get('/health', { schema: healthSchema, config: { public: true } }, async () => ok({ status: 'ok', version }));
}
