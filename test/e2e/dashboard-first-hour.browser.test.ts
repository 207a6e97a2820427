import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Download, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startApi, type RunningApi } from '../support/api.js';
import { drawnPoints, launchChromium, SCREENSHOTS, signIn, type TestBrowser } from '../support/browser.js';
import { bearer, writeTokensFile } from '../support/tokens.js';

/**
 * The dashboard of a new user's and an auditor's first hour, in Chromium, each point at 1400 px
 * and at 420 px wide (no sideways scroll at either, screenshots of both): the way in (/ → /ui/,
 * where the development token is, no 401 before sign-in), the default range fitted to the
 * namespace's history, limit changes before → after and the quota history, denials a second
 * apart each clickable, the marker list whole, memory axes in Mi/Gi, reservations' objects on
 * one line, the editor's button gone while it is open, a what-if in YAML (its parser fetched only
 * then), usage at a chart's instant, a decision's receipt at its own address, and the exports.
 */
const TOKENS = {
  admin: { name: 'platform-admin', token: 'admin-first-hour-0123456789', roles: ['admin'] },
  auditor: { name: 'auditor-anna', token: 'auditor-first-hour-0123456789', roles: ['auditor'] },
  webhook: { name: 'ci-pipeline', token: 'admission-first-hour-0123456789', roles: ['admission'] },
};
const NS = 'shop';
/** A namespace whose quota allows nothing: every request is a denial, for a crowd of markers. */
const BUSY = 'busy';
const BUSY_DENIALS = 24;
const WIDTHS = [1400, 420] as const;

let api: RunningApi;
let chrome: TestBrowser;
let firstEventAt: string;
/** Two denials one second apart. */
let denials: [string, string];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const as = (who: keyof typeof TOKENS) => bearer(TOKENS[who].token);
const pod = (name: string, memory = '300Mi') => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, uid: `uid-${name}` },
  spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '100m', memory } } }] },
});
const reserve = (name: string, namespace = NS) =>
  api.request('POST', `/v1/namespaces/${namespace}/reservations`, { kind: 'Pod', object: pod(name) }, as('webhook'));
const putQuota = async (hard: Record<string, string>, namespace = NS) => {
  const current = await api.request('GET', `/v1/namespaces/${namespace}/resourcequotas/compute`, undefined, as('admin'));
  const body = {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'compute', ...(current.status === 200 ? { resourceVersion: current.body.metadata.resourceVersion } : {}) },
    spec: { hard },
  };
  const answer = await api.request('PUT', `/v1/namespaces/${namespace}/resourcequotas/compute`, body, as('admin'));
  expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300);
};
const shot = (page: Page, name: string) => page.screenshot({ path: fileURLToPath(new URL(`${name}.png`, SCREENSHOTS)), fullPage: true });

/** The page's globals, read structurally: this file is compiled without the DOM's types. */
type Rect = { left: number; right: number; top: number; bottom: number; width: number; height: number };
type Doc = {
  scrollingElement: { scrollWidth: number; clientWidth: number };
  querySelectorAll(selector: string): ArrayLike<{ getBoundingClientRect(): Rect; outerHTML: string }>;
};

/** How wide the page is against its window, and the elements that reach past the window's right edge (to say what overflows). */
function sideways(page: Page): Promise<{ scrollWidth: number; clientWidth: number; wider: string[] }> {
  return page.evaluate(() => {
    const doc = (globalThis as unknown as { document: Doc }).document;
    const { scrollWidth, clientWidth } = doc.scrollingElement;
    const wider = Array.from(doc.querySelectorAll('main *'))
      .filter((e) => e.getBoundingClientRect().right > clientWidth + 0.5)
      .map((e) => e.outerHTML.slice(0, 100));
    return { scrollWidth, clientWidth, wider: wider.slice(0, 5) };
  });
}

/** Runs `check` at each width, then asserts the page does not scroll sideways there and saves a screenshot named after the width. */
async function atEachWidth(page: Page, name: string, check: (width: number) => Promise<void>): Promise<void> {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await check(width);
    const fit = await sideways(page);
    expect(fit.scrollWidth, `${name} at ${width} px: ${fit.wider.join('\n')}`).toBeLessThanOrEqual(fit.clientWidth);
    await shot(page, `${name}-${width}`);
  }
}

/** A new tab, with every answer the page gets kept (to find a 401) and page errors thrown. */
async function newPage(): Promise<{ page: Page; statuses: { url: string; status: number }[]; consoleErrors: string[] }> {
  const page = await chrome.context.newPage();
  const statuses: { url: string; status: number }[] = [];
  const consoleErrors: string[] = [];
  page.on('response', (response) => statuses.push({ url: response.url(), status: response.status() }));
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => {
    throw error;
  });
  return { page, statuses, consoleErrors };
}

/** A page signed in with a token: the sign-in form, once, as a person would. */
async function signedIn(who: keyof typeof TOKENS, hash = '#/'): Promise<Page> {
  const { page } = await newPage();
  return signIn(page, `${api.base}/ui/${hash}`, TOKENS[who].token, TOKENS[who].name);
}

async function chartRange(page: Page, resource: string): Promise<{ since: string; until: string }> {
  const chart = page.locator(`svg.chart[data-resource="${resource}"]`);
  await chart.waitFor();
  return { since: (await chart.getAttribute('data-since')) ?? '', until: (await chart.getAttribute('data-until')) ?? '' };
}

const saved = async (download: Download): Promise<string> => readFileSync((await download.path()) as string, 'utf8');

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  api = await startApi({ insecureDev: false, tokensFile: writeTokensFile(Object.values(TOKENS)) }, 'qlui22');
  // A few seconds of history: the quota, two pods, two denials a second apart, the limits
  // raised, a third pod. Pauses between steps so that each state spans several samples.
  await putQuota({ pods: '2', 'requests.cpu': '2', 'requests.memory': '1Gi' });
  await sleep(400);
  expect((await reserve('hook-1')).status).toBe(201);
  await sleep(400);
  expect((await reserve('web-2')).status).toBe(201);
  await sleep(400);
  expect((await reserve('web-3')).status).toBe(403);
  await sleep(1000);
  expect((await reserve('web-4')).status).toBe(403);
  await sleep(400);
  await putQuota({ pods: '4', 'requests.cpu': '4', 'requests.memory': '1Gi' });
  await sleep(400);
  expect((await reserve('web-5')).status).toBe(201);
  await sleep(400);
  const denied = await api.request('GET', `/v1/namespaces/${NS}/decisions?allowed=false`, undefined, as('auditor'));
  expect(denied.body.items).toHaveLength(2);
  denials = [denied.body.items[0].id, denied.body.items[1].id];
  const first = await api.request('GET', `/v1/namespaces/${NS}/events?limit=1`, undefined, as('auditor'));
  firstEventAt = first.body.items[0].time;
  // The crowd: a quota of no pods, and a denial after another.
  await putQuota({ pods: '0' }, BUSY);
  for (let i = 0; i < BUSY_DENIALS; i++) expect((await reserve(`crowd-${i}`, BUSY)).status).toBe(403);
  await api.settle();
  chrome = await launchChromium();
});

afterAll(async () => {
  await chrome?.close();
  await api?.close();
});

describe('the dashboard in the first hour of a new user and an auditor', () => {
  it('leads / to /ui/, and its sign-in says where the development token is, without a 401 before sign-in', async () => {
    // As the zero-setup start runs the API: development mode, its tokens file, and dev-token beside it.
    const tokensFile = writeTokensFile([
      { name: 'developer', token: 'dev-token-0123456789abcdef', roles: ['admin', 'admission', 'auditor'] },
    ]);
    const devTokenFile = join(dirname(tokensFile), 'dev-token');
    writeFileSync(devTokenFile, 'dev-token-0123456789abcdef\n', { mode: 0o600 });
    const standalone = await startApi({ insecureDev: true, tokensFile }, 'qlui22dev');
    try {
      const { page, statuses, consoleErrors } = await newPage();
      await page.goto(`${standalone.base}/`);
      await page.waitForURL(`${standalone.base}/ui/`);
      await page.getByLabel('Token').waitFor();
      await atEachWidth(page, 'sign-in-dev-token', async () => {
        expect(await page.locator('#dev-token-file').textContent()).toBe(devTokenFile);
        expect(await page.locator('#token-help').textContent()).toContain(`cat ${devTokenFile}`);
      });
      // A fresh load asks nothing that needs a token: no 401, nothing in the console.
      expect(statuses.filter((s) => s.status === 401)).toEqual([]);
      expect(statuses.some((s) => s.url.endsWith('/v1/whoami'))).toBe(false);
      expect(consoleErrors).toEqual([]);
      await page.getByLabel('Token').fill(readFileSync(devTokenFile, 'utf8').trim());
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.locator('#who').getByText('developer').waitFor();
      await page.close();
    } finally {
      await standalone.close();
    }

    // A production setup: the same page, with where tokens come from in general; still no 401.
    const { page, statuses, consoleErrors } = await newPage();
    await page.goto(`${api.base}/`);
    await page.waitForURL(`${api.base}/ui/`);
    await atEachWidth(page, 'sign-in', async () => {
      await page.getByLabel('Token').waitFor();
      expect(await page.locator('#token-help').textContent()).toContain('.quota-ledger/dev-token');
      expect(await page.locator('#dev-token-file').count()).toBe(0);
    });
    expect(statuses.filter((s) => s.status === 401)).toEqual([]);
    expect(consoleErrors).toEqual([]);
    await page.close();
  });

  it("fits the default range to the namespace's history, from its first event to now", async () => {
    const page = await signedIn('auditor', `#/ns/${NS}?tab=usage`);
    await atEachWidth(page, 'default-range', async () => {
      const { since, until } = await chartRange(page, 'pods');
      const first = Date.parse(firstEventAt);
      expect(Date.parse(since)).toBeLessThan(first);
      // The first event is near the left edge, not squashed against the right one.
      expect((first - Date.parse(since)) / (Date.parse(until) - Date.parse(since))).toBeLessThan(0.1);
      expect(Date.now() - Date.parse(until)).toBeLessThan(60_000);
      expect(await page.locator('.zoom [aria-current="true"]').textContent()).toBe('All');
      // The story, read off the chart: every state in order, each drawn.
      const drawn = await drawnPoints(page, 'pods');
      expect(drawn.map((p) => `${p.used}/${p.hard}`).filter((state, i, all) => state !== all[i - 1])).toEqual([
        '0/2',
        '1/2',
        '2/2',
        '2/4',
        '3/4',
      ]);
      const series = await api.request(
        'GET',
        `/v1/namespaces/${NS}/usage/series?since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}&points=100`,
        undefined,
        as('auditor'),
      );
      expect(drawn.map((p) => p.at)).toEqual(
        series.body.points.filter((p: { quotas: unknown[] }) => p.quotas.length > 0).map((p: { at: string }) => p.at),
      );
    });
    // "Day" is still a click away, and "All" comes back to the history.
    await page.getByRole('group', { name: 'Range' }).getByRole('link', { name: 'Day' }).click();
    await expect
      .poll(async () => {
        const r = await chartRange(page, 'pods');
        return Date.parse(r.until) - Date.parse(r.since);
      })
      .toBe(24 * 3600_000);
    await page.close();
  });

  it('says what each limit change did, before → after, on the chart, in the marker list and in the quota history', async () => {
    // The list and the history are on the Changes tab; the chart (hidden there, read all the same) on Usage.
    const page = await signedIn('auditor', `#/ns/${NS}?tab=changes`);
    await atEachWidth(page, 'limit-changes', async () => {
      const limits = page.locator('#markers li.limit');
      await expect
        .poll(() => limits.allTextContents())
        .toEqual([
          expect.stringMatching(/ quota compute changed by platform-admin: pods: 2 → 4, requests\.cpu: 2 → 4$/),
          expect.stringMatching(/ quota compute defined by platform-admin: pods: 2, requests\.cpu: 2, requests\.memory: 1Gi$/),
        ]);
      expect(await page.locator('svg.chart[data-resource="pods"] .limit-marker.changed title').textContent()).toContain(
        'pods: 2 → 4, requests.cpu: 2 → 4',
      );
      const history = page.locator('#quota-history section[data-quota="compute"] tbody tr');
      await expect.poll(() => history.count()).toBe(2);
      const row = async (i: number) => {
        const cells = history.nth(i).locator('td');
        return [...(await cells.allTextContents()).slice(1, 3), await cells.nth(3).locator('div.lines > div').allTextContents()];
      };
      expect(await row(0)).toEqual(['defined', 'platform-admin', ['pods: 2', 'requests.cpu: 2', 'requests.memory: 1Gi']]);
      expect(await row(1)).toEqual(['changed', 'platform-admin', ['pods: 2 → 4', 'requests.cpu: 2 → 4']]);
      await page.locator('#quota-history').scrollIntoViewIfNeeded();
    });
    await page.close();
  });

  it('draws two denials a second apart on a day as two marks, each its own link, and lists every marker whole', async () => {
    const page = await signedIn('auditor', `#/ns/${NS}?tab=usage&range=day`);
    await atEachWidth(page, 'denials-a-second-apart', async () => {
      const chart = page.locator('svg.chart[data-resource="pods"]');
      await chart.waitFor();
      const marks = denials.map((id) => chart.locator(`a.denial-marker[data-decision="${id}"]`));
      // A second in a day is a fraction of a unit: without stacking, one would hide the other.
      // Read once both are drawn: after a resize the chart is drawn again, and a mark being
      // replaced has no box for a moment.
      const boxes = await vi.waitFor(
        async () => {
          const read = await Promise.all(marks.map((m) => m.locator('circle.dot').boundingBox()));
          if (read.some((box) => box === null)) throw new Error('the denial marks are not drawn yet');
          return read as { x: number; y: number; width: number; height: number }[];
        },
        { timeout: 10_000, interval: 100 },
      );
      const [a, b] = boxes as [NonNullable<(typeof boxes)[0]>, NonNullable<(typeof boxes)[0]>];
      const overlap = a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
      expect(overlap, JSON.stringify(boxes)).toBe(false);
      expect(await Promise.all(marks.map((m) => m.getAttribute('data-level')))).toEqual(['0', '1']);
      // Click each (Playwright refuses a click that another element would receive) and land on its receipt.
      for (const [i, id] of denials.entries()) {
        await marks[i]!.locator('circle.dot').click();
        await page.waitForURL(new RegExp(`#/ns/${NS}/decisions/${id}$`));
        await expect.poll(() => page.locator('h1').textContent()).toBe(`Decision ${id}: denied`);
        await page.goBack();
        await chart.waitFor();
      }
      // The list under the charts: no box of its own that scrolls and cuts an entry in half.
      const list = page.locator('ol.markers');
      const style = await list.evaluate((e) => {
        const g = globalThis as unknown as { getComputedStyle(e: unknown): { maxHeight: string; overflowY: string } };
        const { maxHeight, overflowY } = g.getComputedStyle(e);
        const el = e as unknown as { scrollHeight: number; clientHeight: number };
        return { maxHeight, overflowY, scrollHeight: el.scrollHeight, clientHeight: el.clientHeight };
      });
      expect(style).toMatchObject({ maxHeight: 'none', overflowY: 'visible' });
      expect(style.scrollHeight).toBeLessThanOrEqual(style.clientHeight);
      expect(await page.locator('ol.markers li').count()).toBe(4);
    });
    await page.close();
  });

  it(`shows ${BUSY_DENIALS} denials in a second as a stack and a "+n" that zooms in, and the marker list a page at a time`, async () => {
    const page = await signedIn('auditor', `#/ns/${BUSY}?tab=usage&range=day`);
    await atEachWidth(page, 'denials-crowd', async () => {
      // Drawn anew at this width, the list folded again.
      await page.reload();
      await page.getByRole('tab', { name: 'Usage' }).click();
      const chart = page.locator('svg.chart[data-resource="pods"]');
      await chart.waitFor();
      expect(await chart.locator('a.denial-marker').count()).toBe(4);
      const cluster = chart.locator('a.denial-cluster');
      expect(await cluster.getAttribute('data-count')).toBe(String(BUSY_DENIALS - 4));
      // Newest first, 20 of them, then the rest on request (the quota's definition is the 25th).
      const items = page.locator('ol.markers li');
      expect(await items.count()).toBe(20);
      // The list is on the Changes tab.
      await page.getByRole('tab', { name: 'Changes' }).click();
      await page.getByRole('button', { name: `Show ${BUSY_DENIALS + 1 - 20} older` }).click();
      expect(await items.count()).toBe(BUSY_DENIALS + 1);
    });
    await page.getByRole('tab', { name: 'Usage' }).click();
    await page.locator('svg.chart[data-resource="pods"] a.denial-cluster').click();
    await page.waitForURL((url) => url.hash.includes('since=') && url.hash.includes('until='));
    const { since, until } = await chartRange(page, 'pods');
    expect(Date.parse(until) - Date.parse(since)).toBeLessThan(60_000);
    await page.close();
  });

  it('labels a memory axis in binary units, as its values are written', async () => {
    const page = await signedIn('auditor', `#/ns/${NS}?tab=usage`);
    await atEachWidth(page, 'memory-axis', async () => {
      const chart = page.locator('svg.chart[data-resource="requests.memory"]');
      await chart.waitFor();
      expect(await chart.locator('text.ylabel').allTextContents()).toEqual(['0', '512Mi', '1Gi', '1.5Gi']);
      expect((await drawnPoints(page, 'requests.memory')).at(-1)).toMatchObject({ used: '900Mi', hard: '1Gi' });
    });
    await page.close();
  });

  it("keeps a reservation's object on one line, and fits 420 px with every decision whole", async () => {
    const page = await signedIn('auditor', `#/ns/${NS}`);
    await atEachWidth(page, 'namespace-page', async (width) => {
      await page.getByRole('tab', { name: 'Reservations' }).click();
      const object = page.locator('#reservations tr td.object .nowrap').first();
      await expect.poll(() => object.textContent()).toBe('Pod hook-1');
      // One line box: "Pod hook-1", never "Pod hook-" over "1".
      expect(await object.evaluate((e) => (e as unknown as { getClientRects(): ArrayLike<unknown> }).getClientRects().length)).toBe(1);
      await page.getByRole('tab', { name: 'Decisions' }).click();
      const decisions = page.locator('#decisions tbody tr td.decision');
      await expect.poll(() => decisions.count()).toBe(5);
      for (const cell of await decisions.all()) {
        const box = (await cell.boundingBox()) as { x: number; width: number };
        expect(box.x).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width, `a decision cell at ${width} px`).toBeLessThanOrEqual(width);
        expect(await cell.textContent()).toMatch(/^(allowed|denied \(Exceeded\))$/);
      }
    });
    await page.close();
  });

  it('hides "Edit hard limits" while the editor is open, and brings it back on Cancel', async () => {
    const page = await signedIn('admin', `#/ns/${NS}`);
    await atEachWidth(page, 'quota-editor', async () => {
      const edit = page.getByRole('button', { name: 'Edit hard limits' });
      await edit.click();
      await page.getByLabel('pods', { exact: true }).waitFor();
      expect(await edit.isVisible()).toBe(false);
      await shot(page, `quota-editor-open-${page.viewportSize()?.width}`);
      await page.getByRole('button', { name: 'Cancel' }).click();
      expect(await edit.isVisible()).toBe(true);
    });
    await page.close();
  });

  it('asks a what-if of a Pod in YAML, fetching the YAML parser only then', async () => {
    const page = await signedIn('auditor', `#/ns/${NS}?tab=what-if`);
    const scripts: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/ui/assets/') && request.url().endsWith('.js')) scripts.push(request.url());
    });
    await page.getByLabel('Object or request').waitFor();
    const before = scripts.length;
    // JSON needs no parser of its own.
    await page.getByLabel('Object or request').fill(JSON.stringify(pod('web-6')));
    await page.getByRole('button', { name: 'Would it be admitted?' }).click();
    await page.locator('#what-if-result .verdict').waitFor();
    expect(scripts.length).toBe(before);
    const yaml = [
      'apiVersion: v1',
      'kind: Pod',
      'metadata:',
      '  name: big-7',
      'spec:',
      '  containers:',
      '  - name: app',
      '    image: nginx',
      '    resources:',
      '      requests:',
      '        cpu: 100m',
      '        memory: 512Mi',
      '',
    ].join('\n');
    await atEachWidth(page, 'what-if-yaml', async () => {
      await page.getByLabel('Object or request').fill(yaml);
      await page.getByRole('button', { name: 'Would it be admitted?' }).click();
      const verdict = page.locator('#what-if-result .verdict');
      await verdict.waitFor();
      expect(await verdict.textContent()).toBe('Pod big-7: would be denied now.');
      expect(await page.locator('#what-if-result').textContent()).toContain('requests.memory');
      await page.locator('#what-if-result').scrollIntoViewIfNeeded();
    });
    // One chunk more, fetched once: the YAML parser.
    expect(scripts.length).toBe(before + 1);
    await page.close();
  });

  it('shows usage at the instant of a chart point, from the as-of API, at an address that keeps it', async () => {
    const page = await signedIn('auditor', `#/ns/${NS}?tab=usage`);
    const drawn = await drawnPoints(page, 'pods');
    // The sample where the second pod was admitted: 2 of 2.
    const target = drawn.find((p) => p.used === '2' && p.hard === '2') as { at: string };
    await atEachWidth(page, 'usage-at-instant', async () => {
      // On the point itself: samples a millisecond apart share a pixel, where a click at coordinates picks either.
      await page.locator(`svg.chart[data-resource="pods"] circle.point[data-at="${target.at}"]`).dispatchEvent('click');
      const result = page.locator(`#instant-result [data-at="${target.at}"]`);
      await result.waitFor();
      const then = await api.request('GET', `/v1/namespaces/${NS}/usage?at=${encodeURIComponent(target.at)}`, undefined, as('auditor'));
      const compute = then.body.quotas.find((q: { name: string }) => q.name === 'compute');
      for (const resource of ['pods', 'requests.cpu', 'requests.memory']) {
        const meter = page.locator(`#instant-usage tr[data-quota="compute"][data-resource="${resource}"]`).getByRole('meter');
        expect(await meter.getAttribute('aria-valuetext')).toContain(`${compute.used[resource]} of ${compute.hard[resource]}`);
      }
      expect(await page.locator(`svg.chart[data-resource="pods"] line.instant`).getAttribute('data-at')).toBe(target.at);
      expect(decodeURIComponent(new URL(page.url()).hash)).toContain(`at=${target.at}`);
      await page.locator('#instant').scrollIntoViewIfNeeded();
    });
    // The next sample, by keyboard.
    const index = drawn.findIndex((p) => p.at === target.at);
    await page.getByRole('button', { name: 'Next sample →' }).focus();
    await page.keyboard.press('Enter');
    await page.locator(`#instant-result [data-at="${drawn[index + 1]!.at}"]`).waitFor();
    // The address opens the same instant for whoever it is shared with.
    const shared = await signedIn('auditor', new URL(page.url()).hash);
    await shared.locator(`#instant-result [data-at="${drawn[index + 1]!.at}"]`).waitFor();
    await shared.close();
    await page.close();
  });

  it("opens a decision's full receipt from its id, at an address to share", async () => {
    const [id] = denials;
    const page = await signedIn('auditor', `#/ns/${NS}/decisions/${id}`);
    await atEachWidth(page, 'decision-receipt', async () => {
      await expect.poll(() => page.locator('h1').textContent()).toBe(`Decision ${id}: denied`);
      const facts = await page.locator('#receipt').textContent();
      for (const fact of ['ci-pipeline', 'CREATE Pod web-3', 'the REST API', 'HTTP 403', 'uid-web-3']) expect(facts).toContain(fact);
      expect(await page.locator('#explanation table.exceeded tbody tr td').allTextContents()).toEqual(['pods', '1', '2', '2']);
      // The quotas as they stood then: full.
      await expect
        .poll(() => page.locator('#receipt-usage tr[data-resource="pods"]').getByRole('meter').getAttribute('aria-valuetext'))
        .toBe('2 of 2 (100 %)');
      expect(await page.locator('#receipt-link').inputValue()).toBe(page.url());
      expect(JSON.parse((await page.locator('#receipt-json').textContent()) ?? '{}')).toMatchObject({ id, namespace: NS, allowed: false });
    });
    // From the namespace page's decisions, by id.
    await page.goto(`${api.base}/ui/#/ns/${NS}?tab=decisions`);
    await page.getByLabel('Open a decision by id').fill(denials[1]);
    await page.getByRole('button', { name: 'Open', exact: true }).click();
    await page.waitForURL(new RegExp(`#/ns/${NS}/decisions/${denials[1]}$`));
    await expect.poll(() => page.locator('h1').textContent()).toBe(`Decision ${denials[1]}: denied`);
    await page.close();
  });

  it('exports the decisions in view (NDJSON, CSV) and the chart data (CSV)', async () => {
    const page = await signedIn('auditor', `#/ns/${NS}?tab=usage`);
    const { since, until } = await chartRange(page, 'pods');
    await page.getByRole('tab', { name: 'Decisions' }).click();
    await page.locator('#decisions tbody tr').first().waitFor();
    const exported = async (filter = '') => {
      const answer = await api.request(
        'GET',
        `/v1/namespaces/${NS}/decisions/export?since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}${filter}`,
        undefined,
        as('auditor'),
      );
      expect(answer.status).toBe(200);
      return (answer.body as string)
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).id as string);
    };

    const [ndjson] = await Promise.all([page.waitForEvent('download'), page.locator('#export-ndjson').click()]);
    expect(ndjson.suggestedFilename()).toMatch(/^shop decisions .+\.ndjson$/);
    const lines = (await saved(ndjson)).trim().split('\n');
    // Five reservations (the what-ifs asked above are reads: not logged).
    expect(lines.map((line) => JSON.parse(line).id)).toEqual(await exported());
    expect(lines.length).toBeGreaterThanOrEqual(5);

    // Only the denials, as CSV.
    await page.getByLabel('Denials only').check();
    const [csv] = await Promise.all([page.waitForEvent('download'), page.locator('#export-csv').click()]);
    expect(csv.suggestedFilename()).toMatch(/^shop denials .+\.csv$/);
    const rows = (await saved(csv)).trim().split('\r\n');
    expect(rows[0]).toBe(
      'id,time,namespace,source,requester,onBehalfOf,operation,kind,resource,name,dryRun,allowed,code,stage,denial,quota,message',
    );
    expect(rows.slice(1).map((r) => r.split(',')[0])).toEqual(await exported('&allowed=false'));
    expect(rows.slice(1).map((r) => r.split(',')[0])).toEqual(expect.arrayContaining([...denials]));

    await page.getByRole('tab', { name: 'Usage' }).click();
    const [chartCsv] = await Promise.all([page.waitForEvent('download'), page.locator('#export-usage').click()]);
    const chartRows = (await saved(chartCsv)).trim().split('\r\n');
    expect(chartRows[0]).toBe('at,version,quota,resource,used,hard');
    const drawn = await drawnPoints(page, 'pods');
    expect(chartRows.filter((r) => r.split(',')[3] === 'pods').map((r) => r.split(',')[4])).toEqual(drawn.map((p) => p.used));
    await page.close();
  });
});
