import type { FastifyInstance, FastifyReply } from 'fastify';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServiceError } from '../errors.js';

/**
 * Studio (contract.md §9): the admin page at /_/ and its assets. The page is static; it
 * talks to the server only through the public /v1 API with the key the user signs in
 * with, so it can do no more than that key.
 *
 * The assets are read once at start into a fixed table and only names in that table are
 * served: a request path is a table key, never a file-system path, so no traversal can
 * reach anything else.
 */
export interface StudioOptions {
  /** Folder holding the built page (index.html, studio.css, *.js); default: the package's dist/studio. */
  dir?: string;
}

interface Asset {
  body: Buffer;
  type: string;
}

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/**
 * Record text is never trusted as markup (issue 20): the page builds every node with
 * textContent, and this policy is the second wall — no inline script, no foreign origin,
 * so even a string that slipped into markup could not run or call out.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/** Where `npm run build` puts the page: dist/studio beside dist/engine (or beside engine/ when run from source). */
function defaultDir(): string | undefined {
  const candidates = [new URL('../../studio/', import.meta.url), new URL('../../dist/studio/', import.meta.url)];
  return candidates.map((u) => fileURLToPath(u)).find((dir) => existsSync(join(dir, 'index.html')));
}

function loadAssets(dir: string | undefined): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  if (dir === undefined || !existsSync(dir)) return assets;
  for (const name of readdirSync(dir)) {
    const type = TYPES[extname(name)];
    const path = join(dir, name);
    if (type && statSync(path).isFile()) assets.set(name, { body: readFileSync(path), type });
  }
  return assets;
}

export async function studioRoutes(app: FastifyInstance, options: StudioOptions): Promise<void> {
  const assets = loadAssets(options.dir ?? defaultDir());
  const send = (reply: FastifyReply, name: string) => {
    const asset = assets.get(name);
    if (!asset) {
      if (name === 'index.html') {
        // Installed without its build output: say how to get it rather than a bare 404.
        throw new ServiceError('CONFIGURATION_REQUIRED', 'Studio is not built: run npm run build');
      }
      throw new ServiceError('ROUTE_NOT_FOUND', `Route GET /_/${name} not found`);
    }
    return reply
      .header('content-type', asset.type)
      .header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', CONTENT_SECURITY_POLICY)
      .header('referrer-policy', 'no-referrer')
      .send(asset.body);
  };
  const hide = { hide: true } as const;
  app.get('/_', { schema: hide, config: { public: true } }, async (_request, reply) => reply.redirect('/_/'));
  app.get('/_/', { schema: hide, config: { public: true } }, async (_request, reply) => send(reply, 'index.html'));
  app.get<{ Params: { file: string } }>('/_/:file', { schema: hide, config: { public: true } }, async (request, reply) =>
    send(reply, request.params.file),
  );
}
