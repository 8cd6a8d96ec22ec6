/**
 * State that belongs to one running app — registries filled at start-up, counters and caches
 * its requests and jobs share — held by the app instead of by a module, so two apps in one
 * process (the tests start several) never see each other's. A module declares what it keeps with
 * `scopeKey(name, create)` (a constant: the key, not the state); the app's `AppScope` creates the
 * value on first use and hands the same one to every later `get` of that app.
 * Reached as `deps.scope` (routes, module `init`) and `env.scope` (jobs).
 */
export type ScopeKey<T> = { readonly name: string; readonly create: () => T };

export function scopeKey<T>(name: string, create: () => T): ScopeKey<T> {
  return { name, create };
}

export class AppScope {
  readonly #values = new Map<ScopeKey<unknown>, unknown>();

  get<T>(key: ScopeKey<T>): T {
    if (this.#values.has(key)) return this.#values.get(key) as T;
    const value = key.create();
    this.#values.set(key, value);
    return value;
  }
}
