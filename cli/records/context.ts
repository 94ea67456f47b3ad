import type { SchemaClient } from '../../engine/sdk/index.js';
import type { CommandContext } from '../context.js';
import { valueDataClient } from '../instance.js';
import { RecordShape } from './shape.js';

/** Every flag of `schemasync records …` (cli/main.ts); each action reads its own. */
export interface RecordsOptions {
  filter?: string;
  sort?: string[];
  limit?: string;
  all?: boolean;
  cursor?: string;
  data?: string;
  set?: string[];
  ifMatch?: string;
  readFirst?: boolean;
  format?: string;
  out?: string;
  batch?: string;
  dryRun?: boolean;
  onError?: string;
  errors?: string;
  progress?: boolean;
  force?: boolean;
}

export type RecordsContext = CommandContext<RecordsOptions>;

/** The instance, without this command's options: its `--data` is record values (cli/instance.ts valueDataClient). */
export function clientOf(ctx: RecordsContext): SchemaClient {
  return valueDataClient(ctx);
}

/** The object's attributes, read once (issue 17: `--set` is typed by the attribute). */
export async function shapeOf(client: SchemaClient, object: string): Promise<RecordShape> {
  return new RecordShape(await client.schema.getObject(object));
}
