import { grouped } from './numbers.js';

/**
 * One-line progress bars on stderr, drawn only when stderr is a terminal, so pipes, CI logs
 * and tests see nothing. Each redraws at most ten times a second.
 */
export interface ProgressBar {
  update(done: number): void;
  done(): void;
}

const NO_BAR: ProgressBar = { update() {}, done() {} };

/**
 * The redraw loop both bars share: `line(n, seconds)` is the text for n units after that
 * many seconds; `always(n)` forces a redraw (the last byte of a transfer).
 */
function liveLine(stream: NodeJS.WritableStream, line: (n: number, secs: number) => string, always: (n: number) => boolean = () => false): ProgressBar {
  const started = Date.now();
  let last = 0;
  let finished = false;
  let drawn = false;
  return {
    update(n) {
      if (finished) return;
      const now = Date.now();
      if (now - last < 100 && !always(n)) return;
      last = now;
      stream.write(`\r${line(n, Math.max((now - started) / 1000, 0.001))}\u001b[K`);
      drawn = true;
    },
    done() {
      if (finished) return;
      finished = true;
      if (drawn) stream.write('\n');
    },
  };
}

const isTty = (stream: NodeJS.WritableStream) => Boolean((stream as { isTTY?: boolean }).isTTY);
const bar = (frac: number, width: number) => {
  const fill = Math.round(Math.min(frac, 1) * width);
  return `[${'#'.repeat(fill)}${'.'.repeat(width - fill)}] ${Math.floor(Math.min(frac, 1) * 100)}%`;
};

const MIN_BYTES = 1024 * 1024;

/** Long transfers (issue 5: "a progress bar for large files"): bytes and MB/s, from 1 MB up. */
export function progressBar(stream: NodeJS.WritableStream, options: { total: number | undefined; label: string }): ProgressBar {
  if (!isTty(stream) || (options.total !== undefined && options.total < MIN_BYTES)) return NO_BAR;
  const mb = (b: number) => (b / 1024 / 1024).toFixed(1);
  return liveLine(
    stream,
    (n, secs) => {
      const rate = `${(n / 1024 / 1024 / secs).toFixed(1)} MB/s`;
      const total = options.total;
      return total ? `${options.label} ${bar(n / total, 30)} ${mb(n)}/${mb(total)} MB ${rate}` : `${options.label} ${mb(n)} MB ${rate}`;
    },
    (n) => n === options.total,
  );
}

/**
 * The import bar (issue 17: "a progress bar with rows/s and ETA in a terminal, nothing on a
 * pipe"): rows read and rows/s and — when the file's size is known — the share of its bytes
 * read and the time left at the current pace. stdin has no size: no percentage, no ETA.
 */
export function rowProgress(stream: NodeJS.WritableStream, options: { label: string; totalBytes: number | undefined; bytesRead: () => number }): ProgressBar {
  if (!isTty(stream)) return NO_BAR;
  return liveLine(stream, (rows, secs) => {
    const counts = `${grouped(rows)} rows ${grouped(rows / secs)} rows/s`;
    if (!options.totalBytes) return `${options.label} ${counts}`;
    const frac = Math.min(options.bytesRead() / options.totalBytes, 1);
    const eta = frac > 0 ? ` ETA ${clock((secs / frac) * (1 - frac))}` : '';
    return `${options.label} ${bar(frac, 24)} ${counts}${eta}`;
  });
}

function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}
