import { describe, expect, it } from 'vitest';
import { navigationLinks, readSite, repositoryFileExists, targetOf, type Link, type Page } from '../support/docs-site.js';

/**
 * Every link of the documentation site resolves, without the network: a link to another page
 * names a page that exists and, with `#anchor`, a heading id that page has (slugged by
 * VitePress' own renderer, as the built site slugs it); a link out of docs/ names a file of the
 * repository; the navigation and sidebar name pages that exist. External links are not followed.
 * (`npm run docs:build` fails on a dead page link too, but never looks at anchors.)
 */

function problems(pages: readonly Page[], links: readonly Link[]): string[] {
  const byPath = new Map(pages.map((page) => [page.path, page]));
  const found: string[] = [];
  for (const link of links) {
    const target = targetOf(link);
    if (target.kind === 'external') continue;
    if (target.kind === 'file') {
      if (!repositoryFileExists(target.path))
        found.push(`${link.page}: ${link.href} names ${target.path}, which the repository does not have`);
      continue;
    }
    const page = byPath.get(target.path);
    if (!page) found.push(`${link.page}: ${link.href} names the page ${target.path}, which does not exist`);
    else if (target.anchor && !page.ids.has(target.anchor))
      found.push(`${link.page}: ${link.href}: ${target.path} has no heading #${target.anchor}`);
  }
  return found;
}

describe('the documentation site', () => {
  it('has the pages the site promises', async () => {
    const paths = (await readSite()).map((page) => page.path);
    for (const page of [
      'index.md',
      'getting-started.md',
      'concepts/ledger.md',
      'concepts/reservations.md',
      'concepts/reconciliation.md',
      'concepts/shared-quotas.md',
      'concepts/kubernetes-differences.md',
      'install/kubernetes.md',
      'install/managed-control-planes.md',
      'install/upgrades.md',
      'operations/index.md',
      'operations/backups-and-retention.md',
      'operations/replicas.md',
      'security.md',
      'api.md',
      'cli.md',
      'configuration.md',
      'benchmarks.md',
      'benchmarks-history.md',
      'design-decisions.md',
      'architecture.md',
      'style.md',
      'reference/configuration.md',
      'reference/metrics.md',
      'reference/http-api.md',
      'reference/cli.md',
    ]) {
      expect(paths).toContain(page);
    }
  });

  it('resolves every internal link and anchor of every page', async () => {
    const pages = await readSite();
    const links = pages.flatMap((page) => page.links);
    expect(links.length).toBeGreaterThan(100);
    expect(problems(pages, links)).toEqual([]);
  }, 60_000);

  it('resolves every link of the navigation and the sidebar', async () => {
    expect(problems(await readSite(), await navigationLinks())).toEqual([]);
  }, 60_000);

  it('names a dead page, a missing anchor and a missing repository file', async () => {
    const pages = await readSite();
    const broken: Link[] = [
      { page: 'concepts/ledger.md', href: 'reservation.md' },
      { page: 'concepts/ledger.md', href: '../security.md#no-such-heading' },
      { page: 'architecture.md', href: '../bench/no-such-file.md' },
      { page: 'index.md', href: 'https://example.com/not-followed' },
    ];
    const found = problems(pages, broken).join('\n');
    expect(found).toMatch(/reservation\.md names the page concepts\/reservation\.md, which does not exist/);
    expect(found).toMatch(/security\.md has no heading #no-such-heading/);
    expect(found).toMatch(/bench\/no-such-file\.md, which the repository does not have/);
    expect(found).not.toMatch(/example\.com/);
  }, 60_000);
});
