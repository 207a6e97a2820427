import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * docs/style.md's "The shape" is a map of the tree, and a map that names files which are not
 * there misleads the reader it was written for. Every folder it draws and every file or folder
 * it names under one must exist.
 *
 * The map's grammar: a line whose first word ends in `/` draws a folder, inside the folder of the
 * nearest less indented such line; the words of its description (and of the more indented lines
 * after it) that look like file names (`main.ts`) or folders (`write/`) must be found somewhere
 * under it. Patterns (`<unix-ms>-VerbNoun.ts`, `*.spec.ts`) are not names.
 */
const ROOT = process.cwd();
const NAME = /(?<![\w<>*.-])([A-Za-z][\w.-]*\.(?:ts|md|json|sh|yaml)|[a-z][\w-]*\/)(?![\w<>*-])/g;

interface Named {
  readonly folder: string;
  readonly name: string;
}

/** The code block under "## The shape". */
export function shapeBlock(markdown: string): string[] {
  const section = markdown.split(/^## The shape$/m)[1] ?? '';
  return (/```\n([\s\S]*?)```/.exec(section)?.[1] ?? '').split('\n');
}

/** The folders the map draws, and the names it places in each. */
export function namesOf(lines: readonly string[]): { folders: string[]; named: Named[] } {
  const stack: { indent: number; path: string }[] = [];
  const folders: string[] = [];
  const named: Named[] = [];
  let current = '';
  for (const line of lines) {
    if (line.trim() === '') continue;
    const indent = line.length - line.trimStart().length;
    const [first = '', ...rest] = line.trim().split(/\s+/);
    const isFolder = /^[\w.-]+(\/[\w.-]+)*\/$/.test(first) && !(stack.length > 0 && indent > (stack[stack.length - 1]?.indent ?? 0) + 12);
    let words = rest.join(' ');
    if (isFolder) {
      while (stack.length > 0 && (stack[stack.length - 1]?.indent ?? 0) >= indent) stack.pop();
      current = posix.join(stack[stack.length - 1]?.path ?? '', first);
      stack.push({ indent, path: current });
      folders.push(current);
    } else if (indent === 0) {
      current = '';
      words = line;
    } else words = line;
    for (const match of words.matchAll(NAME)) named.push({ folder: current, name: match[1] ?? '' });
  }
  return { folders, named };
}

function foundUnder(folder: string, name: string): boolean {
  const base = name.replace(/\/$/, '');
  const walk = (dir: string, depth: number): boolean => {
    if (depth > 6 || !existsSync(dir)) return false;
    for (const entry of readdirSync(dir)) {
      if (entry === 'node_modules' || entry === 'dist' || entry === '.git') continue;
      const path = join(dir, entry);
      if (entry === base || posix.join(posix.relative(ROOT, dir), entry).endsWith(base)) return true;
      if (statSync(path).isDirectory() && walk(path, depth + 1)) return true;
    }
    return false;
  };
  return walk(join(ROOT, folder), 0);
}

/** What the map names that the tree does not have. */
export function missing(lines: readonly string[]): string[] {
  const { folders, named } = namesOf(lines);
  return [
    ...folders.filter((folder) => !existsSync(join(ROOT, folder))).map((folder) => `the folder ${folder}`),
    ...named.filter(({ folder, name }) => !foundUnder(folder, name)).map(({ folder, name }) => `${name} under ${folder || 'the root'}`),
  ];
}

describe("docs/style.md's map of the code", () => {
  const lines = shapeBlock(readFileSync(join(ROOT, 'docs/style.md'), 'utf8'));

  it('draws folders and names files (the map is read)', () => {
    const { folders, named } = namesOf(lines);
    expect(folders).toEqual(expect.arrayContaining(['apps/admission-api/src/', 'libs/ledger/src/', 'migrations/']));
    expect(named.length).toBeGreaterThan(20);
  });

  it('names only files and folders that exist', () => {
    expect(missing(lines)).toEqual([]);
  });

  it('the rule bites: a file the tree does not have is named', () => {
    const drawn = [
      'apps/',
      '  reconciler/src/         main.ts, reconcile.queue.ts (queue, job names)',
      'libs/',
      '  nowhere/src/  index.ts',
    ];
    expect(missing(drawn)).toEqual([
      'the folder libs/nowhere/src/',
      'reconcile.queue.ts under apps/reconciler/src/',
      'index.ts under libs/nowhere/src/',
    ]);
  });
});
