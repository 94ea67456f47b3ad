/**
 * How the user reaches this CLI again, for commands we print to be pasted: from a local
 * install (`node_modules/.bin`, or npx's cache, both below a node_modules folder) it is
 * `npx schemasync`; a global install or a clone's bin is on the path or called by its own
 * path, so the bare name is kept.
 */
export function commandName(argv1: string | undefined = process.argv[1]): string {
  return argv1 !== undefined && argv1.split(/[\\/]/).includes('node_modules') ? 'npx schemasync' : 'schemasync';
}
