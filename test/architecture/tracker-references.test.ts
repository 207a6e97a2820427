import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The code says why, not where the reason was once filed: the tracker its comments used to point
 * at ("issue 33", "(issue 41)") is not part of the repository, so a reader could not follow the
 * number (docs/style.md, rule 13). No file under apps/ or libs/, specs included, names an issue by number;
 * a comment states the reason itself, a test title the behaviour it checks.
 */

const ROOTS = ['apps', 'libs'] as const;
const SOURCE = /\.(ts|mts|mjs|tsx)$/;
const SKIPPED = new Set(['node_modules', 'dist', 'build']);
/** "issue 33", "Issues #12", and one a comment wraps ("(issue\n * 33)"). */
const TRACKER_REFERENCE = /\bissues?(?:[ \t]+|[ \t]*\r?\n[ \t]*(?:\*|\/\/)?[ \t]*)#?\d+\b/gi;

/** The source files below the roots (tests included), relative to `root`, with forward slashes. */
function filesOf(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = posix.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED.has(entry.name)) walk(path);
      } else if (SOURCE.test(entry.name)) found.push(path);
    }
  };
  for (const dir of ROOTS) walk(dir);
  return found.sort();
}

/** `file:line: reference` for every place in `text` that names an issue by number. */
function trackerReferences(file: string, text: string): string[] {
  return [...text.matchAll(TRACKER_REFERENCE)].map(
    (match) => `${file}:${text.slice(0, match.index).split('\n').length}: ${match[0].replace(/\s+/g, ' ')}`,
  );
}

describe('references to the issue tracker', () => {
  const root = process.cwd();

  it('reads the source files of apps/ and libs/, specs included', () => {
    const files = filesOf(root);
    expect(files.length).toBeGreaterThan(200);
    expect(files).toContain('libs/domain/src/index.ts');
    expect(files.some((file) => file.endsWith('.spec.ts'))).toBe(true);
  });

  it('finds none in apps/ or libs/: a comment says the reason, a test title the behaviour', () => {
    expect(filesOf(root).flatMap((file) => trackerReferences(file, readFileSync(join(root, file), 'utf8')))).toEqual([]);
  });

  it('finds a reference wherever one is, and nothing that only looks like one', () => {
    const found = (line: string): number => trackerReferences('a.ts', line).length;
    for (const line of [
      '// refused (issue 33).',
      ' * Issue 40: watches.',
      "describe('delete (issue 39)'",
      '/** issues 18 and 19 */',
      '// see issue #12',
      ' * before the router (issue\n * 36): it',
      '// (issue\n// 36)',
    ])
      expect(found(line), line).toBe(1);
    for (const line of ['// a known issue with 3 retries', '// kubernetes#122483', '// tissue 4', '// issue33', 'const issues = 5;'])
      expect(found(line), line).toBe(0);
    expect(trackerReferences('a.ts', 'one\n// (issue 41) and\n * (issue\n * 36)\n')).toEqual(['a.ts:2: issue 41', 'a.ts:3: issue * 36']);
  });
});
