import type { Store } from '../../engine/store/types.js';

/**
 * The real store, except that creating a record fails as a bug would: a plain Error whose
 * text must never reach a client (5xx masked, service-interface.md "Errors") but must reach
 * the log under the request id.
 */
const SECRET_DETAIL = 'secret detail: /var/lib/schemasync at 0x7f';

export function failingCreate(store: Store): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'createRecord') return async () => Promise.reject(new Error(SECRET_DETAIL));
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
