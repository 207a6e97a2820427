import type { VariableDefinition } from '@quota/config';
import { cell, code, generatedHeader, table } from './markdown.js';

const KIND_TEXT: Readonly<Record<VariableDefinition['kind'], string>> = {
  integer: 'a whole number',
  url: 'a URL',
  oneOf: 'one of',
  flag: '`true`, `false`, `1` or `0`',
  text: 'text',
  file: 'a file path',
  list: 'a comma list',
};

function defaultOf(definition: VariableDefinition): string {
  if (definition.defaultText) return definition.defaultText;
  if (definition.default === undefined) return 'unset';
  return code(String(definition.default));
}

function accepted(definition: VariableDefinition): string {
  switch (definition.kind) {
    case 'integer':
      return `${definition.min?.toLocaleString('en-US')} to ${definition.max?.toLocaleString('en-US')}`;
    case 'url':
      return `a URL: ${(definition.protocols ?? []).map((p) => code(`${p}//…`)).join(', ')}`;
    case 'oneOf':
      return (definition.values ?? []).map(code).join(', ');
    case 'list':
      return definition.values ? `a comma list of ${definition.values.map(code).join(', ')}` : KIND_TEXT.list;
    default:
      return KIND_TEXT[definition.kind];
  }
}

/** A documentation path (`security.md#limits`) as a link from docs/reference/. */
function seeLink(see: string): string {
  const [page = '', anchor] = see.split('#');
  const title = page
    .replace(/\.md$/, '')
    .replace(/\/index$/, '')
    .replace(/[-/]/g, ' ');
  return ` See [${title}](../${page}${anchor ? `#${anchor}` : ''}).`;
}

/** docs/reference/configuration.md from libs/config's table of variables. */
export function configurationPage(
  variables: Readonly<Record<string, VariableDefinition>>,
  groups: Readonly<Record<string, string>>,
): string {
  const parts = [
    generatedHeader(
      'Configuration reference',
      '`VARIABLES` in libs/config/src/variables.ts, the table the configuration loaders take their defaults and bounds from',
    ),
    'Every process reads its settings from the environment, once, at boot; a bad value stops it with a message naming the variable',
    '(`invalid configuration: PORT: must be between 0 and 65535, got 70000`). An empty value is the same as an unset one.',
    'The [configuration guide](../configuration.md) says which to set where.',
  ];
  for (const [group, title] of Object.entries(groups)) {
    const rows = Object.entries(variables)
      .filter(([, definition]) => definition.group === group)
      .map(([name, definition]) => [
        code(name),
        cell(defaultOf(definition)),
        cell(accepted(definition)),
        cell(definition.meaning + (definition.see ? seeLink(definition.see) : '')),
      ]);
    if (rows.length === 0) continue;
    parts.push('', `## ${title}`, '', table(['variable', 'default', 'accepts', 'meaning'], rows));
  }
  return `${parts.join('\n')}\n`;
}
