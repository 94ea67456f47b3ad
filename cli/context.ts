import pc from 'picocolors';

/** Global options (contract.md §4), as commander hands them to every command. */
export interface GlobalOptions {
  baseUrl?: string;
  apiKey?: string;
  config?: string;
  /** A target of `targets:` in schemasync.yaml (contract.md §7). */
  target?: string;
  json?: boolean;
  color: boolean;
}

export type Colors = ReturnType<typeof pc.createColors>;

/** What a command gets: its options, the global ones, and where to write. */
export interface CommandContext<O = Record<string, unknown>> {
  args: string[];
  options: O;
  global: GlobalOptions;
  cwd: string;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** Colours for stdout (off for --no-color, NO_COLOR, or when stdout is not a terminal). */
  colors: Colors;
}

/** A command returns its exit code; only cli/main.ts exits (architecture.md pattern 8). */
export type CommandRun<O = Record<string, unknown>> = (ctx: CommandContext<O>) => Promise<number>;

export function makeColors(enabled: boolean): Colors {
  return pc.createColors(enabled && pc.isColorSupported && Boolean((process.stdout as { isTTY?: boolean }).isTTY));
}
