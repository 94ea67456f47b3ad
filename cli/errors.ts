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

/** An HTTP failure as the CLI prints it: `Error: <status> <code>: <message>` (contract.md §4). */
export function formatServiceErrorLine(status: number, code: string | undefined, message: string): string {
  return code ? `Error: ${status} ${code}: ${message}` : `Error: ${status} ${message}`;
}
