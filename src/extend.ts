/**
 * `{ ...base, ...extra }` for the records the engine and adapters keep per line in flight
 * (planned and claimed actions, claim requests, batch inputs). On Node 20 (V8 11) an object
 * literal that spreads an object and then adds properties gets a property store several times
 * larger than the same properties copied with `Object.assign` onto a fresh object: about 500
 * bytes against 150 for a claimed upsert. Each line of a chunk holds a few such records while
 * its batch is in flight, long enough to reach the old generation, so the difference is heap a
 * long sync carries.
 *
 * Copies own enumerable properties, later ones winning, as the spread does. The target is a fresh
 * plain object, so the only setter a property could reach is `__proto__`: neither argument may
 * have an own `__proto__` key (the engine's records never do).
 */
export function extend<T extends object, U extends object>(base: T, extra: U): T & U {
  return Object.assign({}, base, extra);
}
