import { describe, expect, it } from 'vitest';
import { namespaceHref, namespaceTab } from './namespace.js';

describe("a namespace page's address", () => {
  it('keeps the tab beside the range, the quotas (the default) left out', () => {
    expect(namespaceHref({ namespace: 'team a', tab: 'decisions', range: 'day' })).toBe('#/ns/team%20a?tab=decisions&range=day');
    expect(namespaceHref({ namespace: 'team-a', tab: 'quotas', range: 'all' })).toBe('#/ns/team-a?range=all');
    expect(namespaceHref({ namespace: 'team-a', range: 'hour', until: '2026-01-01T00:00:00.000Z' })).toBe(
      '#/ns/team-a?range=hour&until=2026-01-01T00%3A00%3A00.000Z',
    );
  });

  it('reads the tab back, the quotas for none or an unknown one', () => {
    expect(
      namespaceTab(new URLSearchParams(namespaceHref({ namespace: 'x', tab: 'what-if', range: 'all' }).split('?')[1]).get('tab')),
    ).toBe('what-if');
    expect(namespaceTab(null)).toBe('quotas');
    expect(namespaceTab('toString')).toBe('quotas');
  });
});
