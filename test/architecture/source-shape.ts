import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import ts from 'typescript';

/**
 * The shape of the source, measured for test/architecture/dependency-rules.test.ts: which files
 * import which (to find import circles and folder loops), how long each file and each function
 * is. Pure functions over file texts, so the checks are tested on made-up trees too.
 */

/** Where the source lives; tests (`*.spec.ts`, `*.test.ts`, and test/ with its support) are measured by their own rules. */
export const SOURCE_ROOTS = ['apps', 'libs', 'bench', 'migrations', 'scripts'] as const;
export const FILE_LINES_MAX = 450;
export const FUNCTION_LINES_MAX = 80;
/** A function may run longer when its comment says why, in a sentence starting with this. */
export const LENGTH_REASON = 'Length:';

const SOURCE = /\.(ts|mts|mjs)$/;
const TEST = /\.(spec|test)\.ts$/;
const SKIPPED = new Set(['node_modules', 'dist', 'results', 'screenshots', 'build']);

/** The source files below `root`, as paths relative to it with forward slashes. */
export function sourceFiles(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = posix.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED.has(entry.name)) walk(path);
      } else if (SOURCE.test(entry.name) && !TEST.test(entry.name) && !entry.name.endsWith('.d.ts')) found.push(path);
    }
  };
  for (const dir of SOURCE_ROOTS) walk(dir);
  return found.sort();
}

export function readSources(root: string, files: readonly string[]): Map<string, string> {
  return new Map(files.map((file) => [file, readFileSync(join(root, file), 'utf8')]));
}

/** `@quota/name` → its index file: the aliases of tsconfig.json. */
export function aliasesOf(root: string): Map<string, string> {
  const config = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile).config as {
    compilerOptions: { paths: Record<string, string[]> };
  };
  return new Map(Object.entries(config.compilerOptions.paths).map(([alias, [target]]) => [alias, posix.normalize(target ?? '')]));
}

/** Each file's imports (static, dynamic, re-exports, type-only alike) among the files given. */
export function importGraph(sources: ReadonlyMap<string, string>, aliases: ReadonlyMap<string, string>): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const [file, text] of sources) {
    const targets = new Set<string>();
    for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
      const target = resolve(file, fileName, sources, aliases);
      if (target !== undefined && target !== file) targets.add(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

function resolve(
  from: string,
  specifier: string,
  sources: ReadonlyMap<string, string>,
  aliases: ReadonlyMap<string, string>,
): string | undefined {
  const aliased = aliases.get(specifier);
  if (aliased !== undefined) return sources.has(aliased) ? aliased : undefined;
  if (!specifier.startsWith('.')) return undefined;
  const path = posix.normalize(posix.join(posix.dirname(from), specifier));
  const candidates = [path, path.replace(/\.js$/, '.ts'), path.replace(/\.mjs$/, '.mts'), `${path}.ts`, `${path}/index.ts`];
  return candidates.find((candidate) => sources.has(candidate));
}

/** The strongly connected parts of a graph with more than one node (Tarjan): each is a circle. */
export function circles(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        connect(target);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(target) ?? 0));
      } else if (onStack.has(target)) low.set(node, Math.min(low.get(node) ?? 0, index.get(target) ?? 0));
    }
    if (low.get(node) !== index.get(node)) return;
    const part: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = member === node ? undefined : stack.pop()) {
      onStack.delete(member);
      part.push(member);
    }
    if (part.length > 1) found.push(part.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) connect(node);
  return found;
}

/**
 * The graph of folders within each package (`libs/domain/src/selectors` → `libs/domain/src/validation`):
 * an arrow for every import from a file in one folder to a file in a sibling folder or below it.
 * A circle here is a folder loop, the two folders one layer in truth.
 */
export function folderGraph(graph: ReadonlyMap<string, ReadonlySet<string>>): Map<string, Set<string>> {
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = dirname(file);
    for (const target of targets) {
      const to = dirname(target);
      if (to === from || packageOf(to) !== packageOf(from) || to.startsWith(`${from}/`) || from.startsWith(`${to}/`)) continue;
      const arrows = folders.get(from) ?? new Set<string>();
      arrows.add(to);
      folders.set(from, arrows);
    }
  }
  return folders;
}

/** `libs/domain`, `apps/admission-api`, `bench`: what a folder belongs to. */
function packageOf(folder: string): string {
  const [top, name] = folder.split('/');
  return top === 'apps' || top === 'libs' ? `${top}/${name}` : (top ?? '');
}

export function lineCount(text: string): number {
  return text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
}

export interface LongFunction {
  readonly file: string;
  readonly line: number;
  readonly name: string;
  readonly lines: number;
}

/** Functions (declarations, methods, arrows) longer than `max` lines whose comment gives no reason. */
export function longFunctions(file: string, text: string, max = FUNCTION_LINES_MAX): LongFunction[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const lines = source.getLineAndCharacterOfPosition(node.end).line - first + 1;
      if (lines > max && !commentOf(node, source).includes(LENGTH_REASON))
        found.push({ file, line: first + 1, name: nameOf(node, source), lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The comments before a function, or before the statement that holds it (`const f = () => …`). */
function commentOf(node: ts.Node, source: ts.SourceFile): string {
  const holder = ts.isVariableDeclaration(node.parent)
    ? node.parent.parent.parent
    : ts.isPropertyAssignment(node.parent)
      ? node.parent
      : node;
  return (ts.getLeadingCommentRanges(source.text, holder.getFullStart()) ?? [])
    .map((range) => source.text.slice(range.pos, range.end))
    .join('\n');
}

function nameOf(node: ts.Node, source: ts.SourceFile): string {
  const named = node as { name?: ts.Node };
  if (named.name) return named.name.getText(source);
  if (ts.isVariableDeclaration(node.parent) || ts.isPropertyAssignment(node.parent)) return node.parent.name.getText(source);
  return '(anonymous)';
}

/** Paths relative to the repository, for messages. */
export function shown(root: string, path: string): string {
  return relative(root, path) || path;
}
