import { createWriteStream, existsSync, statSync } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { CommandContext, CommandRun } from '../context.js';
import { CliError } from '../errors.js';
import { clientFor } from '../instance.js';
import { progressBar } from '../render/progress.js';

interface FilesOptions {
  to?: string;
  title?: string;
  name?: string;
  type?: string;
  out?: string;
  force?: boolean;
}

const USAGE = 'schemasync files upload <path> [--to object/recordId/attribute] | get <id> | download <id> [--out f] | rm <id>';

/**
 * `schemasync files …` (contract.md §4, issue 5): everything through the SDK, bytes
 * streamed both ways. Human output by default, one JSON document with --json.
 */
export const run: CommandRun<FilesOptions> = async (ctx) => {
  const [action, arg] = [ctx.args[0], ctx.args[1]];
  if (!arg) throw new CliError(`Missing argument. Usage: ${USAGE}`);
  switch (action) {
    case 'upload':
      return upload(ctx, arg);
    case 'get':
      return get(ctx, arg);
    case 'download':
      return download(ctx, arg);
    case 'rm':
    case 'delete':
      return remove(ctx, arg);
    default:
      throw new CliError(`Unknown files action '${action ?? ''}'. Usage: ${USAGE}`);
  }
};

function print(ctx: CommandContext<FilesOptions>, data: unknown, human: string): void {
  ctx.stdout.write(ctx.global.json ? `${JSON.stringify(data, null, 2)}\n` : `${human}\n`);
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

async function upload(ctx: CommandContext<FilesOptions>, file: string): Promise<number> {
  const path = resolve(ctx.cwd, file);
  if (!existsSync(path) || !statSync(path).isFile()) throw new CliError(`No such file: ${file}`);
  const size = statSync(path).size;
  const client = clientFor(ctx);
  const bar = progressBar(ctx.stderr, { total: size, label: basename(path) });
  const options = {
    ...(ctx.options.name !== undefined ? { name: ctx.options.name } : {}),
    ...(ctx.options.type !== undefined ? { mimeType: ctx.options.type } : {}),
    onProgress: (sent: number) => bar.update(sent),
  };
  try {
    if (ctx.options.to !== undefined) {
      const parts = ctx.options.to.split('/');
      if (parts.length !== 3 || parts.some((p) => p === '')) {
        throw new CliError(`--to must be object/recordId/attribute, got '${ctx.options.to}'`);
      }
      const [object, recordId, attribute] = parts as [string, string, string];
      const doc = await client.files.uploadTo({ object, recordId, attribute }, { path }, {
        ...options,
        ...(ctx.options.title !== undefined ? { title: ctx.options.title } : {}),
      });
      bar.done();
      print(ctx, doc, `Attached document ${doc.id} ("${doc.title}") to ${object} ${recordId} ${attribute} (file ${doc.fileId})`);
    } else {
      const f = await client.files.upload({ path }, options);
      bar.done();
      print(ctx, f, `Uploaded ${f.name} (${formatBytes(f.size)}, ${f.mimeType}) as file ${f.id}\nsha256 ${f.sha256}`);
    }
  } finally {
    bar.done();
  }
  return 0;
}

async function get(ctx: CommandContext<FilesOptions>, id: string): Promise<number> {
  const f = await clientFor(ctx).files.get(id);
  print(
    ctx,
    f,
    [`id          ${f.id}`, `name        ${f.name}`, `type        ${f.mimeType}`, `size        ${formatBytes(f.size)} (${f.size} bytes)`, `sha256      ${f.sha256}`, `uploadedBy  ${f.uploadedBy ?? '-'}`, `createdAt   ${f.createdAt}`].join('\n'),
  );
  return 0;
}

async function download(ctx: CommandContext<FilesOptions>, id: string): Promise<number> {
  const client = clientFor(ctx);
  const toStdout = ctx.options.out === '-';
  // The stored name is metadata: only its base name is used, and only when --out is absent.
  const meta = ctx.options.out === undefined ? await client.files.get(id) : undefined;
  const target = toStdout ? undefined : resolve(ctx.cwd, ctx.options.out ?? basename(meta!.name));
  if (target && existsSync(target) && !ctx.options.force) {
    throw new CliError(`${target} exists; pass --force to overwrite or --out to choose another path`);
  }
  const res = await client.files.download(id);
  const total = Number(res.headers.get('content-length') ?? NaN);
  const bar = progressBar(ctx.stderr, { total: Number.isFinite(total) ? total : undefined, label: id });
  let received = 0;
  const body = Readable.fromWeb(res.body as unknown as WebReadableStream<Uint8Array>);
  body.on('data', (c: Buffer) => bar.update((received += c.length)));
  try {
    if (toStdout) {
      await pipeline(body, ctx.stdout);
    } else {
      // Written beside the target and renamed, so an interrupted download leaves no half file.
      const tmp = `${target!}.part`;
      try {
        await pipeline(body, createWriteStream(tmp));
        await rename(tmp, target!);
      } catch (err) {
        await unlink(tmp).catch(() => undefined);
        throw err;
      }
    }
  } finally {
    bar.done();
  }
  if (!toStdout) {
    if (ctx.global.json) print(ctx, { id, path: target, size: received }, '');
    else ctx.stdout.write(`Downloaded ${formatBytes(received)} to ${target!}\n`);
  }
  return 0;
}

async function remove(ctx: CommandContext<FilesOptions>, id: string): Promise<number> {
  const out = await clientFor(ctx).files.delete(id);
  print(ctx, out, `Deleted file ${out.id}`);
  return 0;
}
