import { h } from '../dom.js';

/** One tab: its id (in the address as `tab=`), its label, and its panel. */
export interface TabSpec<Id extends string> {
  readonly id: Id;
  readonly label: string;
  readonly panel: Node;
}

/**
 * Tabs as the ARIA authoring practices shape them: a `tablist` of buttons (`role=tab`,
 * `aria-selected`, `aria-controls`), one `tabpanel` shown at a time; the selected tab is the one
 * Tab stops on, and the arrow keys, Home and End move between tabs (each shown as it is reached).
 * Every panel is in the page from the start, hidden but for one, so what a panel loads is there
 * when its tab is chosen. `onSelect` is told each choice (the page keeps it in its address).
 */
export function tabs<Id extends string>(
  label: string,
  specs: readonly TabSpec<Id>[],
  selected: Id,
  onSelect: (id: Id) => void,
): HTMLElement {
  const buttons: HTMLButtonElement[] = [];
  const panels: HTMLElement[] = [];
  const show = (index: number, focus: boolean): void => {
    buttons.forEach((button, i) => {
      button.setAttribute('aria-selected', String(i === index));
      button.tabIndex = i === index ? 0 : -1;
      (panels[i] as HTMLElement).hidden = i !== index;
    });
    if (focus) buttons[index]?.focus();
  };
  specs.forEach((spec, i) => {
    const button = h(
      'button',
      { type: 'button', role: 'tab', id: `tab-${spec.id}`, 'aria-controls': `panel-${spec.id}`, 'data-tab': spec.id },
      spec.label,
    );
    button.addEventListener('click', () => {
      show(i, false);
      onSelect(spec.id);
    });
    button.addEventListener('keydown', (event) => {
      const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: specs.length - 1 }[event.key];
      if (next === undefined) return;
      event.preventDefault();
      const index = (next + specs.length) % specs.length;
      show(index, true);
      onSelect((specs[index] as TabSpec<Id>).id);
    });
    buttons.push(button);
    panels.push(
      h(
        'div',
        { role: 'tabpanel', id: `panel-${spec.id}`, 'aria-labelledby': `tab-${spec.id}`, tabindex: 0, class: 'tabpanel' },
        spec.panel,
      ),
    );
  });
  const element = h('div', { class: 'tabs' }, h('div', { role: 'tablist', 'aria-label': label, class: 'tablist' }, ...buttons), ...panels);
  show(
    Math.max(
      0,
      specs.findIndex((spec) => spec.id === selected),
    ),
    false,
  );
  return element;
}
