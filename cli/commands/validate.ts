import type { CommandRun } from '../context.js';
import { CliError } from '../errors.js';
export const run: CommandRun = async () => {
  throw new CliError('init: not yet available');
};
