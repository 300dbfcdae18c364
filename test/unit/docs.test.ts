/**
 * The docs shipped in the package stand alone: they cite no source or test file (those are not
 * in the package; architecture.md, for contributors, is left out of it), every relative link
 * points at a shipped doc or an anchor that exists, and the benchmarks' files are named as the
 * repository's. Where a doc counts or names parts of the code, it agrees with the code.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { files: string[] };
const excluded = new Set(pkg.files.filter((f) => f.startsWith('!')).map((f) => f.slice(1)));
const shipped = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md') && !excluded.has(`docs/${f}`)).map((f) => `docs/${f}`);
const docs = ['README.md', ...shipped].map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') }));

/** GitHub's anchor of a heading. */
const anchorOf = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
const anchors = new Map(docs.map((d) => [d.path, new Set([...d.text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1]!)))]));

describe('shipped docs', () => {
  it('leave the contributors page out of the package', () => {
    expect(excluded.has('docs/architecture.md')).toBe(true);
    expect(shipped).toContain('docs/guarantees.md');
  });

  it.each(docs.map((d) => [d.path, d.text]))('%s cites no file of the repository that the package does not ship', (_path, text) => {
    const cited = [...text.matchAll(/`([^`\n]*\b(?:src|test|adapters|schemas)\/[^`\n]*)`/g)].map((m) => m[1]!);
    const bench = [...text.matchAll(/[^\n]{0,40}`bench\/[^`\n]+`/g)].map((m) => m[0]).filter((line) => !/repository's/.test(line));
    expect([...cited, ...bench]).toEqual([]);
  });

  it.each(docs.map((d) => [d.path, d.text]))('%s links only to shipped docs and to headings that exist', (path, text) => {
    const broken = [...text.matchAll(/\]\(([^)#\s]*)(#[^)\s]*)?\)/g)].flatMap((m) => {
      const [, file, hash] = m;
      if (/^[a-z]+:/.test(file!)) return [];
      const target = file === '' ? path : join(path === 'README.md' ? '' : 'docs', file!).replace(/\\/g, '/');
      if (!anchors.has(target)) return [`${m[0]}: ${target} is not a shipped doc`];
      if (hash && !anchors.get(target)!.has(hash.slice(1))) return [`${m[0]}: no heading ${hash} in ${target}`];
      return [];
    });
    expect(broken).toEqual([]);
  });
});

describe('docs that count or name the code', () => {
  it('guarantees.md numbers its guarantees 1 to N and says N where it counts them', () => {
    const text = readFileSync(join(ROOT, 'docs', 'guarantees.md'), 'utf8');
    const numbers = [...text.matchAll(/^\| (\d+) \| \*\*/gm)].map((m) => Number(m[1]));
    expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => i + 1));
    const counted = [...text.matchAll(/guarantees 1-(\d+)/g)].map((m) => Number(m[1]));
    expect(counted.length).toBeGreaterThan(0);
    for (const n of counted) expect(n).toBe(numbers.length);
  });

  it('architecture.md names every file of src/engine in its engine section', () => {
    const page = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
    const start = page.indexOf('\n## The engine');
    expect(start).toBeGreaterThan(0);
    const section = page.slice(start, page.indexOf('\n## ', start + 1));
    const files = readdirSync(join(ROOT, 'src', 'engine')).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(10);
    expect(files.filter((f) => !section.includes(`\`${f}\``) && !section.includes(`src/engine/${f}`))).toEqual([]);
  });
});
