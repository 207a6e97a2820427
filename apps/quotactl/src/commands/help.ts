import { FLAG_HELP, GLOBAL_FLAGS, type FlagName } from '../args.js';
import type { Command } from '../context.js';
import { tabwrite } from '../format/table.js';

export const EXIT_CODES_HELP = [
  'Exit codes:',
  '  0  done',
  '  1  the server refused (409 Conflict, 410 Expired, 422 Invalid, …) or another error',
  '  2  usage error: bad flags or arguments, unreadable file, invalid YAML (nothing was sent)',
  '  3  admission denied (reserve refused by a quota or a limit range)',
  '  4  not found',
  '  5  unauthorized or forbidden (no token, a wrong one, or one without the role)',
  '  6  server unavailable: unreachable, timed out, rate-limited (429) or failing (5xx)',
].join('\n');

function flagLines(flags: readonly FlagName[], overrides: Partial<Record<FlagName, string>> = {}): string {
  return tabwrite(
    flags.map((flag) => {
      const [spelling, meaning] = FLAG_HELP[flag];
      return [`  ${spelling}`, overrides[flag] ?? meaning];
    }),
    { minWidth: 0, padding: 2 },
  );
}

/** `quotactl help` / `quotactl --help`. */
export function overview(commands: readonly Command[]): string {
  const list = tabwrite(
    commands.map((c) => [`  ${c.name}`, c.summary]),
    { minWidth: 0, padding: 2 },
  );
  return [
    'quotactl drives quota-ledger (Kubernetes ResourceQuota and LimitRange admission with an audit',
    'ledger) from a terminal, as kubectl drives Kubernetes.',
    '',
    'Commands:',
    list.trimEnd(),
    '',
    'Flags every command takes:',
    flagLines(GLOBAL_FLAGS).trimEnd(),
    '',
    EXIT_CODES_HELP,
    '',
    'Use "quotactl COMMAND --help" (or "quotactl help COMMAND") for more about a command.',
    '',
  ].join('\n');
}

/** `quotactl COMMAND --help`. */
export function commandHelp(command: Command): string {
  const parts = [`${command.summary[0]?.toUpperCase() ?? ''}${command.summary.slice(1)}.`, '', `Usage:\n  quotactl ${command.synopsis}`];
  if (command.description) parts.push('', command.description);
  if (command.examples?.length) parts.push('', 'Examples:', ...command.examples.map((e) => `  ${e}`));
  if (command.flags.length) parts.push('', 'Flags:', flagLines(command.flags, command.flagHelp).trimEnd());
  const globals = command.needsServer ? GLOBAL_FLAGS : GLOBAL_FLAGS.filter((f) => f === 'output' || f === 'help');
  parts.push(
    '',
    command.needsServer ? 'Global flags:' : 'Other flags:',
    flagLines(globals, command.flagHelp).trimEnd(),
    '',
    EXIT_CODES_HELP,
    '',
  );
  return parts.join('\n');
}
