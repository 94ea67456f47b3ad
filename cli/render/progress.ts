/**
 * A one-line progress bar on stderr for long transfers (issue 5: "a progress bar for large
 * files"), drawn only when stderr is a terminal and the transfer is big enough to watch,
 * so pipes, CI logs and tests see nothing. Redraws at most ten times a second.
 */
export interface ProgressBar {
  update(done: number): void;
  done(): void;
}

const MIN_BYTES = 1024 * 1024;

export function progressBar(stream: NodeJS.WritableStream, options: { total: number | undefined; label: string }): ProgressBar {
  const tty = Boolean((stream as { isTTY?: boolean }).isTTY);
  if (!tty || (options.total !== undefined && options.total < MIN_BYTES)) return { update() {}, done() {} };
  const started = Date.now();
  let last = 0;
  let finished = false;
  let drawn = false;
  const width = 30;
  const draw = (n: number) => {
    const secs = Math.max((Date.now() - started) / 1000, 0.001);
    const rate = `${(n / 1024 / 1024 / secs).toFixed(1)} MB/s`;
    const mb = (b: number) => (b / 1024 / 1024).toFixed(1);
    let line: string;
    if (options.total) {
      const frac = Math.min(n / options.total, 1);
      const fill = Math.round(frac * width);
      line = `${options.label} [${'#'.repeat(fill)}${'.'.repeat(width - fill)}] ${Math.floor(frac * 100)}% ${mb(n)}/${mb(options.total)} MB ${rate}`;
    } else {
      line = `${options.label} ${mb(n)} MB ${rate}`;
    }
    stream.write(`\r${line}\u001b[K`);
    drawn = true;
  };
  return {
    update(n) {
      if (finished) return;
      const now = Date.now();
      if (now - last < 100 && n !== options.total) return;
      last = now;
      draw(n);
    },
    done() {
      if (finished) return;
      finished = true;
      if (drawn) stream.write('\n');
    },
  };
}

/**
 * The import bar (issue 17: "a progress bar with rows/s and ETA in a terminal, nothing on a
 * pipe"): rows read and rows/s, and — when the file's size is known — the share of its
 * bytes read and the time left at the current pace. stdin has no size: no percentage, no ETA.
 */
export interface RowProgress {
  update(rows: number): void;
  done(): void;
}

export function rowProgress(stream: NodeJS.WritableStream, options: { label: string; totalBytes: number | undefined; bytesRead: () => number }): RowProgress {
  if (!(stream as { isTTY?: boolean }).isTTY) return { update() {}, done() {} };
  const started = Date.now();
  let last = 0;
  let drawn = false;
  let finished = false;
  const width = 24;
  const draw = (rows: number) => {
    const secs = Math.max((Date.now() - started) / 1000, 0.001);
    const rate = rows / secs;
    const parts = [options.label];
    if (options.totalBytes) {
      const frac = Math.min(options.bytesRead() / options.totalBytes, 1);
      const fill = Math.round(frac * width);
      const eta = frac > 0 ? (secs / frac) * (1 - frac) : undefined;
      parts.push(`[${'#'.repeat(fill)}${'.'.repeat(width - fill)}] ${Math.floor(frac * 100)}%`);
      parts.push(`${rows.toLocaleString('en-US')} rows`, `${Math.round(rate).toLocaleString('en-US')} rows/s`);
      if (eta !== undefined) parts.push(`ETA ${clock(eta)}`);
    } else {
      parts.push(`${rows.toLocaleString('en-US')} rows`, `${Math.round(rate).toLocaleString('en-US')} rows/s`);
    }
    stream.write(`\r${parts.join(' ')}\u001b[K`);
    drawn = true;
  };
  return {
    update(rows) {
      const now = Date.now();
      if (finished || now - last < 100) return;
      last = now;
      draw(rows);
    },
    done() {
      if (finished) return;
      finished = true;
      if (drawn) stream.write('\n');
    },
  };
}

function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}
