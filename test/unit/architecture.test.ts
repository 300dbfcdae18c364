/**
 * The layers point down only: schemas/ (imports nothing of ours) -> src/ (engine, ledger, keys;
 * no adapter) -> adapters/ (vendors, their fakes, the testing entry) -> the CLI (src/cli, top).
 * No import circle anywhere in the shipped code.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');
const LAYERS = ['schemas', 'src', 'adapters'];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? files(p) : e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** Relative imports of a file (static, re-exports and dynamic), as repo-relative .ts paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const specs = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)].map((m) => m[1]!);
  return specs.map((s) => relative(ROOT, resolve(dirname(file), s)).replace(/\.js$/, '.ts'));
}

const graph = new Map<string, string[]>(LAYERS.flatMap((l) => files(join(ROOT, l))).map((f) => [relative(ROOT, f), importsOf(f)]));
const layerOf = (path: string) => (path.startsWith('src/cli/') ? 'cli' : path.split('/')[0]!);
const RANK: Record<string, number> = { schemas: 0, src: 1, adapters: 2, cli: 3 };

describe('architecture', () => {
  it('reads every shipped file', () => {
    expect(graph.size).toBeGreaterThan(40);
  });

  it('imports only downwards: schemas -> src -> adapters -> cli', () => {
    const upward = [...graph].flatMap(([from, deps]) =>
      deps.filter((to) => RANK[layerOf(to)] !== undefined && RANK[layerOf(to)]! > RANK[layerOf(from)]!).map((to) => `${from} -> ${to}`),
    );
    expect(upward).toEqual([]);
  });

  it('has no import circle', () => {
    // Tarjan's strongly connected components: any component of two or more files is a circle.
    let index = 0;
    const idx = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const circles: string[][] = [];
    const visit = (v: string) => {
      idx.set(v, index);
      low.set(v, index++);
      stack.push(v);
      onStack.add(v);
      for (const w of graph.get(v) ?? []) {
        if (!graph.has(w)) continue;
        if (!idx.has(w)) {
          visit(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
      }
      if (low.get(v) === idx.get(v)) {
        const scc: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          scc.push(w);
        } while (w !== v);
        if (scc.length > 1) circles.push(scc.sort());
      }
    };
    for (const v of graph.keys()) if (!idx.has(v)) visit(v);
    expect(circles).toEqual([]);
  });
});
