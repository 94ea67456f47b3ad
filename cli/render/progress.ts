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
