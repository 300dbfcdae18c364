/**
 * The order record objects are written in when records link to records: a record is written
 * after the records it links to, so that a Salesforce lookup by external id finds its target and
 * a HubSpot association has both ends' ids. Objects are grouped in levels (0: links to nothing
 * configured; n: links to objects below n); the upserts of one level go out together, as all
 * upserts do without links. A cycle in the configured links is refused, naming it.
 */
import type { ObjectSpec } from '../adapter.js';
import { ConfigError } from '../errors.js';

/** Record object -> level. Throws a ConfigError naming the cycle when the links form one. */
export function linkLevels(objects: Readonly<Record<string, ObjectSpec>>, vendor: string): Map<string, number> {
  const levels = new Map<string, number>();
  const visiting = new Set<string>();
  const visit = (name: string, path: readonly string[]): number => {
    const known = levels.get(name);
    if (known !== undefined) return known;
    if (visiting.has(name)) {
      const cycle = [...path.slice(path.indexOf(name)), name];
      throw new ConfigError(`invalid ${vendor} objects: their links form a cycle (${cycle.join(' -> ')}); a link must point one way (link the other end to this one instead)`);
    }
    visiting.add(name);
    let level = 0;
    for (const to of objects[name]?.links ?? []) {
      if (to !== name && objects[to]?.kind === 'record') level = Math.max(level, visit(to, [...path, name]) + 1);
    }
    visiting.delete(name);
    levels.set(name, level);
    return level;
  };
  for (const [name, spec] of Object.entries(objects)) if (spec.kind === 'record') visit(name, []);
  return levels;
}
