import { code, fenced, generatedHeader, table } from './markdown.js';
import type { CommandHelp } from './sources.js';

/** docs/reference/cli.md from quotactl's own help. */
export function cliPage(help: { overview: string; commands: readonly CommandHelp[] }): string {
  const parts = [
    generatedHeader('quotactl reference', "quotactl's own help (`quotactl --help` and `quotactl COMMAND --help`)"),
    'The guide to quotactl (installing it as a kubectl plugin, completion, output formats) is [the CLI page](../cli.md).',
    '',
    table(
      ['command', 'does'],
      help.commands.map((c) => [`[${code(c.name)}](#quotactl-${c.name})`, c.summary]),
    ),
    '',
    '## quotactl',
    '',
    fenced(help.overview),
  ];
  for (const command of help.commands) parts.push('', `## quotactl ${command.name}`, '', fenced(command.help));
  return `${parts.join('\n')}\n`;
}
