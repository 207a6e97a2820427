import { h } from '../dom.js';
import { percent } from '../format.js';

/**
 * used/hard as a bar, with the numbers in text beside it (the bar alone says nothing to a
 * screen reader or in high-contrast mode). Past 80 % it turns amber, at 100 % red; the
 * colour is never the only signal: the percentage is always written.
 */
export function usageBar(ratio: number, used: string, hard: string, label: string): HTMLElement {
  const level = ratio >= 1 ? 'level-full' : ratio >= 0.8 ? 'level-high' : 'level-ok';
  const fill = h('span', { class: 'fill' });
  // A CSSOM write, which the page's CSP allows (it refuses style attributes in markup).
  fill.style.width = `${Math.min(100, Math.max(0, ratio * 100)).toFixed(1)}%`;
  return h(
    'span',
    { class: `usage ${level}` },
    h(
      'span',
      {
        class: 'bar',
        role: 'meter',
        'aria-label': label,
        'aria-valuemin': 0,
        'aria-valuemax': 100,
        'aria-valuenow': Math.round(Math.min(ratio, 10) * 100),
        'aria-valuetext': `${used} of ${hard} (${percent(ratio)})`,
      },
      fill,
    ),
    h('span', { class: 'numbers' }, `${used} / ${hard} `, h('span', { class: 'pct' }, percent(ratio))),
  );
}
