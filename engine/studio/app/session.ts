/**
 * The API key lives only in this tab's session storage (contract.md §9): it is gone when the
 * tab closes, is never written to local storage or a cookie, and sign-out removes it.
 */
const KEY = 'schemasync.studio.apiKey';

export const session = {
  get(): string | null {
    return sessionStorage.getItem(KEY);
  },
  set(apiKey: string): void {
    sessionStorage.setItem(KEY, apiKey);
  },
  clear(): void {
    sessionStorage.removeItem(KEY);
  },
};
