import { defineConfig } from 'vitepress';

/**
 * The documentation site (npm run docs serves it with reloads, npm run docs:build writes
 * docs/.vitepress/dist). VitePress renders docs/ as it is: every page is plain Markdown that
 * reads on GitHub too, and the reference pages under docs/reference/ are generated
 * (npm run docs:generate). Dead links fail the build; anchors are checked by
 * test/architecture/docs-links.test.ts.
 */
export default defineConfig({
  title: 'quota-ledger',
  description:
    'Kubernetes ResourceQuota and LimitRanger admission on an append-only PostgreSQL ledger, without the races, with a complete audit history.',
  // The site is served from wherever it is copied: relative asset paths, no absolute base.
  cleanUrls: false,
  lastUpdated: false,
  // The proposed short README is for the lead, not a page.
  srcExclude: ['.proposed-README.md'],
  markdown: { lineNumbers: false },
  // A link out of docs/ names a file of the repository (bench/baseline/README.md): it reads on
  // GitHub, and test/architecture/docs-links.test.ts checks that the file exists. Every link
  // between pages must resolve.
  ignoreDeadLinks: [(url) => url.startsWith('./../') || url.startsWith('../')],
  themeConfig: {
    search: { provider: 'local' },
    outline: { level: [2, 3] },
    nav: [
      { text: 'Getting started', link: '/getting-started' },
      { text: 'Concepts', link: '/concepts/ledger' },
      { text: 'Install', link: '/install/' },
      { text: 'Operations', link: '/operations/' },
      { text: 'Reference', link: '/reference/configuration' },
    ],
    sidebar: [
      {
        text: 'Introduction',
        items: [
          { text: 'Overview', link: '/' },
          { text: 'Getting started', link: '/getting-started' },
          { text: 'The API, by example', link: '/api-by-example' },
          { text: 'Dashboard', link: '/dashboard' },
        ],
      },
      {
        text: 'Concepts',
        items: [
          { text: 'The ledger', link: '/concepts/ledger' },
          { text: 'Reservations', link: '/concepts/reservations' },
          { text: 'Reconciliation', link: '/concepts/reconciliation' },
          { text: 'The projection worker', link: '/concepts/projection' },
          { text: 'Shared quotas', link: '/concepts/shared-quotas' },
          { text: 'Where we differ from Kubernetes', link: '/concepts/kubernetes-differences' },
        ],
      },
      {
        text: 'Installing',
        items: [
          { text: 'Overview', link: '/install/' },
          { text: 'On Kubernetes', link: '/install/kubernetes' },
          { text: 'With Helm', link: '/install/helm' },
          { text: 'PostgreSQL in the cluster', link: '/install/database' },
          { text: 'Managed control planes', link: '/install/managed-control-planes' },
          { text: 'The webhook configurations', link: '/install/webhook-configuration' },
          { text: 'Upgrades', link: '/install/upgrades' },
        ],
      },
      {
        text: 'Operations',
        items: [
          { text: 'Health, metrics, alerts, dashboards', link: '/operations/' },
          { text: 'Backups, retention and archiving', link: '/operations/backups-and-retention' },
          { text: 'Replicas and failover', link: '/operations/replicas' },
          { text: 'A synchronous standby, and failover', link: '/operations/failover' },
          { text: 'When the ledger is down', link: '/operations/blast-radius' },
          { text: 'Scale: the reconciler and the kube-apiserver', link: '/operations/scale' },
        ],
      },
      {
        text: 'Using it',
        items: [
          { text: 'Security', link: '/security' },
          { text: 'HTTP API: the contract', link: '/api' },
          { text: 'HTTP API: routes and roles', link: '/api-routes' },
          { text: 'CLI: quotactl', link: '/cli' },
          { text: 'Configuration', link: '/configuration' },
          { text: 'Admission plugins', link: '/admission-plugins' },
        ],
      },
      {
        text: 'Reference (generated)',
        items: [
          { text: 'Configuration', link: '/reference/configuration' },
          { text: 'Metrics', link: '/reference/metrics' },
          { text: 'HTTP API', link: '/reference/http-api' },
          { text: 'quotactl', link: '/reference/cli' },
        ],
      },
      {
        text: 'Project',
        items: [
          { text: 'Benchmarks', link: '/benchmarks' },
          { text: 'Benchmark history', link: '/benchmarks-history' },
          { text: 'Design decisions', link: '/design-decisions' },
          { text: 'Architecture', link: '/architecture' },
          { text: 'Development', link: '/development' },
          { text: 'Code style', link: '/style' },
        ],
      },
    ],
  },
});
