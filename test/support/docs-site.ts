import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import { createMarkdownRenderer } from 'vitepress';
import { parse } from 'yaml';
import { ROOT } from './deploy.js';

/**
 * The documentation site's pages as VitePress reads them: each page's heading ids (from
 * VitePress' own Markdown renderer, so anchors are slugged exactly as the site slugs them) and
 * every link it holds, with where the link goes. No network: external links are listed, not
 * followed.
 */

export const DOCS = join(ROOT, 'docs');

export interface Link {
  readonly page: string;
  readonly href: string;
}

export interface Page {
  /** Relative to docs/, e.g. `concepts/ledger.md`. */
  readonly path: string;
  readonly ids: ReadonlySet<string>;
  readonly links: readonly Link[];
}

/** Every Markdown page of the site (docs/, without VitePress' own directory or the lead's proposed README). */
export function pagePaths(dir = DOCS): string[] {
  return readdirSync(dir)
    .flatMap((name) => {
      const path = join(dir, name);
      if (name === '.vitepress' || name === 'node_modules') return [];
      if (statSync(path).isDirectory()) return pagePaths(path);
      return name.endsWith('.md') && name !== '.proposed-README.md' ? [relative(DOCS, path)] : [];
    })
    .sort();
}

/** The hrefs of a home page's frontmatter (hero actions, features' links). */
function frontmatterLinks(frontmatter: unknown): string[] {
  const links: string[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === 'object' && value !== null) {
      for (const [key, inner] of Object.entries(value)) {
        if (key === 'link' && typeof inner === 'string') links.push(inner);
        else walk(inner);
      }
    }
  };
  walk(frontmatter);
  return links;
}

type Token = { type: string; attrGet(name: string): string | null; children: Token[] | null };

export async function readSite(): Promise<Page[]> {
  const md = await createMarkdownRenderer(DOCS, {}, '/', { warn: () => undefined });
  return pagePaths().map((path) => {
    const source = readFileSync(join(DOCS, path), 'utf8');
    const match = /^---\n([\s\S]*?)\n---\n/.exec(source);
    const body = match ? source.slice(match[0].length) : source;
    const tokens = md.parse(body, { path: join(DOCS, path), relativePath: path, cleanUrls: false }) as unknown as Token[];
    const ids = new Set<string>();
    const links: Link[] = frontmatterLinks(match ? parse(match[1] ?? '') : undefined).map((href) => ({ page: path, href }));
    const visit = (list: readonly Token[]): void => {
      for (const token of list) {
        const id = token.attrGet('id');
        if (id) ids.add(id);
        if (token.type === 'link_open') links.push({ page: path, href: token.attrGet('href') ?? '' });
        if (token.children) visit(token.children);
      }
    };
    visit(tokens);
    return { path, ids, links };
  });
}

/** Where a link goes: another page (and an anchor), a file of the repository outside docs/, or elsewhere. */
export type Target = { kind: 'page'; path: string; anchor: string | undefined } | { kind: 'file'; path: string } | { kind: 'external' };

export function targetOf(link: Link): Target {
  const { href } = link;
  if (/^[a-z][a-z0-9+.-]*:/i.test(href)) return { kind: 'external' };
  const [rawPath = '', anchor] = href.split('#');
  const path = decodeURIComponent(rawPath);
  if (path === '') return { kind: 'page', path: link.page, anchor };
  // Site-absolute (`/getting-started`) or relative to the page's directory.
  const resolved = path.startsWith('/') ? posix.normalize(path.slice(1)) : posix.normalize(posix.join(posix.dirname(link.page), path));
  if (resolved.startsWith('../')) return { kind: 'file', path: posix.normalize(posix.join('docs', resolved)) };
  return { kind: 'page', path: pageFile(resolved), anchor };
}

/** A site path as the page file it names: `install/` → install/index.md, `getting-started` → getting-started.md. */
function pageFile(path: string): string {
  if (path === '' || path === '.' || path.endsWith('/')) return posix.join(path === '.' ? '' : path, 'index.md');
  if (path.endsWith('.md')) return path;
  if (path.endsWith('.html')) return `${path.slice(0, -'.html'.length)}.md`;
  return existsSync(join(DOCS, path)) && statSync(join(DOCS, path)).isDirectory() ? posix.join(path, 'index.md') : `${path}.md`;
}

/** The links of the site's navigation and sidebar (docs/.vitepress/config.mts), as if on the home page. */
export async function navigationLinks(): Promise<Link[]> {
  const { default: config } = (await import(join(DOCS, '.vitepress/config.mts'))) as { default: { themeConfig?: unknown } };
  return frontmatterLinks(config.themeConfig).map((href) => ({ page: 'index.md', href }));
}

export const repositoryFileExists = (path: string): boolean => existsSync(join(ROOT, path));
