/**
 * The scope an idempotency-key is remembered under (contract.md §3): the calling key, the
 * route and its parameters, so two clients, or one client on two routes, never share a key.
 */
export function idempotencyScope(keyId: string, method: string, route: string, params: unknown): string {
  return `${keyId} ${method} ${route} ${JSON.stringify(params)}`;
}

/**
 * How the scope of every idempotent route of `object` ends: they are the POST record routes,
 * whose one parameter is the object's name. An object dropped or renamed forgets the answers
 * under its name, so a later object of that name never replays them (a rerun import into a
 * recreated object would otherwise write nothing and say it had).
 */
export const objectScopeTail = (object: string): string => ` ${JSON.stringify({ objectName: object })}`;
