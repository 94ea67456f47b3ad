/**
 * A failure the CLI reports as one line and an exit code of its own choosing
 * (contract.md §4: 2 when no instance is configured, 1 for everything else).
 */
export class CliError extends Error {
  readonly exitCode: number;
  readonly hint: string | undefined;
  /** Declaration diagnostics behind the failure, for the `--json` failure document. */
  readonly diagnostics: readonly unknown[] | undefined;
  constructor(message: string, options: { exitCode?: number; hint?: string; diagnostics?: readonly unknown[] } = {}) {
    super(message);
    this.name = 'CliError';
    this.exitCode = options.exitCode ?? 1;
    this.hint = options.hint;
    this.diagnostics = options.diagnostics;
  }
}

/**
 * An HTTP failure as the CLI prints it: `Error: <status> <code>: <message>` (contract.md §4).
 * Status 0 is the SDK's "no answer came" (refused, timed out, cut off): a person reads
 * `Error: could not connect to <base_url>`, not a status that means nothing to them.
 */
export function formatServiceErrorLine(status: number, code: string | undefined, message: string): string {
  if (status === 0) return `Error: ${message.charAt(0).toLowerCase()}${message.slice(1)}`;
  return code ? `Error: ${status} ${code}: ${message}` : `Error: ${status} ${message}`;
}

/** The indented line under an `Error:` line that says what to do (contract.md §4). */
export function hintLine(hint: string | undefined): string {
  return hint ? `  hint: ${hint}\n` : '';
}

/** A GitHub Actions annotation: `%`, CR and LF are escaped as the runner requires. */
export function githubError(message: string): string {
  return `::error::${message.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A')}\n`;
}
