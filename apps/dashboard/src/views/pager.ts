import { api, type ApiError } from '../api.js';
import { fill, h } from '../dom.js';

export interface Pager {
  /** The "Show more" button and the status line, to place under the table. */
  readonly more: HTMLButtonElement;
  readonly status: HTMLParagraphElement;
  /** Reads the first page again (after a filter changed). */
  reload(): void;
}

/**
 * A table body filled from a paged list (`{items, next}`): the first page now, the next on
 * "Show more". An answer that arrives after a newer request was made (a filter changed
 * meanwhile) is dropped, so a slow old page never overwrites a new one.
 */
export function pager<T>(
  body: HTMLTableSectionElement,
  options: {
    path: (after: string | undefined) => string;
    row: (item: T) => HTMLElement;
    summary: (shown: number, more: boolean) => string;
    moreLabel?: string;
  },
): Pager {
  const more = h('button', { type: 'button', class: 'more', hidden: true }, options.moreLabel ?? 'Show more');
  const status = h('p', { class: 'status', role: 'status' });
  let next: string | undefined;
  let generation = 0;
  const load = async (append: boolean): Promise<void> => {
    const mine = ++generation;
    status.textContent = 'Loading…';
    try {
      const page = await api<{ items: T[]; next?: string }>('GET', options.path(append ? next : undefined));
      if (mine !== generation) return;
      next = page.next;
      const rows = page.items.map(options.row);
      if (append) body.append(...rows);
      else fill(body, ...rows);
      more.hidden = next === undefined;
      status.textContent = options.summary(body.children.length, next !== undefined);
    } catch (error) {
      if (mine === generation) status.textContent = (error as ApiError).message;
    }
  };
  more.addEventListener('click', () => void load(true));
  void load(false);
  return { more, status, reload: () => void load(false) };
}
