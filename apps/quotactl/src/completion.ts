import { FLAG_HELP, GLOBAL_FLAGS, OPTIONS, type FlagName } from './args.js';
import { DEFAULT_OUTPUTS, type Command } from './context.js';

/**
 * Shell completion the way kubectl (cobra) does it: the shell asks the program itself,
 * `quotactl __complete WORD… CURRENT`, and gets one candidate a line (`value<TAB>description`)
 * then `:DIRECTIVE`. The bash and zsh scripts below are thin adapters around that answer, and
 * kubectl ≥ 1.26 calls `kubectl_complete-quota` with the same words for the plugin, so one
 * function serves the three. It never calls the server: a TAB must not wait on the network.
 */

/** cobra's ShellCompDirective bits, which kubectl reads from a plugin's completion. */
export const DIRECTIVE = {
  /** Let the shell complete file names (what a flag taking a file wants). */
  default: 0,
  /** No candidate and no file names either. */
  noFileComp: 4,
} as const;

interface Candidate {
  readonly value: string;
  readonly description?: string;
}

interface Answer {
  readonly candidates: readonly Candidate[];
  readonly directive: number;
  /** Put before each candidate (`--output=` when the value is typed in the same word). */
  readonly prefix?: string;
}

/** The first word after these commands, by the spellings the help uses. */
const RESOURCE_TYPES: readonly Candidate[] = [
  { value: 'quota', description: 'ResourceQuota' },
  { value: 'limitrange', description: 'LimitRange' },
  { value: 'clusterresourcequota', description: 'ClusterResourceQuota (quota.openshift.io, cluster-scoped)' },
  { value: 'hrq', description: 'HierarchicalResourceQuota (hnc.x-k8s.io)' },
];
const SHARED_TYPES = RESOURCE_TYPES.filter((t) => t.value === 'clusterresourcequota' || t.value === 'hrq');
const NAMESPACE_TYPE: Candidate = { value: 'namespace', description: 'the namespaces the ledger holds' };
const GET_TYPES: readonly Candidate[] = [...RESOURCE_TYPES, NAMESPACE_TYPE];
const DELETE_TYPES: readonly Candidate[] = [...GET_TYPES, { value: 'reservation', description: 'release a reservation (REST admission)' }];
export const SHELLS = ['bash', 'zsh'] as const;

/** Flags whose value is a file: the shell's own file completion does best there. */
const FILE_FLAGS: ReadonlySet<FlagName> = new Set(['filename', 'ca-file', 'certificate-authority', 'kubeconfig']);
/** Flags with a closed set of values. */
const FLAG_VALUES: Partial<Record<FlagName, readonly string[]>> = {
  'failure-policy': ['Fail', 'Ignore'],
  'count-failure-policy': ['Ignore', 'Fail'],
  order: ['newest', 'oldest'],
};

const SHORT: ReadonlyMap<string, FlagName> = new Map(
  Object.entries(OPTIONS).flatMap(([name, option]) => ('short' in option ? [[`-${option.short}`, name as FlagName] as const] : [])),
);

function flagOf(word: string): FlagName | undefined {
  if (SHORT.has(word)) return SHORT.get(word);
  const long = /^--([a-z][-a-z]*)(=|$)/.exec(word)?.[1];
  return long !== undefined && long in OPTIONS ? (long as FlagName) : undefined;
}

const takesValue = (flag: FlagName): boolean => OPTIONS[flag].type === 'string';

/** The flags a command takes, as its help lists them; every global one before a command is named. */
function flagsOf(command: Command | undefined): readonly FlagName[] {
  if (!command) return GLOBAL_FLAGS;
  const globals = command.needsServer ? GLOBAL_FLAGS : GLOBAL_FLAGS.filter((f) => f === 'output' || f === 'help');
  return [...command.flags, ...globals];
}

function valuesOf(flag: FlagName, command: Command | undefined): Answer {
  if (flag === 'output')
    return { candidates: (command?.outputs ?? DEFAULT_OUTPUTS).map((value) => ({ value })), directive: DIRECTIVE.noFileComp };
  if (FILE_FLAGS.has(flag)) return { candidates: [], directive: DIRECTIVE.default };
  return { candidates: (FLAG_VALUES[flag] ?? []).map((value) => ({ value })), directive: DIRECTIVE.noFileComp };
}

const commandNames = (commands: readonly Command[]): Candidate[] => commands.map((c) => ({ value: c.name, description: c.summary }));

function argumentsOf(command: Command, args: readonly string[], commands: readonly Command[]): readonly Candidate[] {
  if (args.length > 0) return [];
  switch (command.name) {
    case 'get':
      return GET_TYPES;
    case 'describe':
      return RESOURCE_TYPES;
    case 'delete':
      return DELETE_TYPES;
    case 'usage':
      return SHARED_TYPES;
    case 'help':
      return commandNames(commands);
    case 'completion':
      return SHELLS.map((value) => ({ value }));
    default:
      return [];
  }
}

function answer(commands: readonly Command[], words: readonly string[]): Answer {
  const current = words.at(-1) ?? '';
  const positionals: string[] = [];
  let pending: FlagName | undefined; // a flag whose value is the next word
  for (const word of words.slice(0, -1)) {
    if (pending !== undefined) {
      pending = undefined;
      continue;
    }
    const flag = flagOf(word);
    if (flag !== undefined) {
      if (takesValue(flag) && !word.includes('=')) pending = flag;
      continue;
    }
    if (!word.startsWith('-')) positionals.push(word);
  }
  const [name, ...args] = positionals;
  const command = name === undefined ? undefined : commands.find((c) => c.name === name || c.aliases?.includes(name));
  if (pending !== undefined) return valuesOf(pending, command);

  const inline = /^(--[a-z][-a-z]*)=/.exec(current);
  const inlineFlag = inline ? flagOf(current) : undefined;
  if (inline?.[1] && inlineFlag !== undefined && takesValue(inlineFlag))
    return { ...valuesOf(inlineFlag, command), prefix: `${inline[1]}=` };
  if (current.startsWith('-')) {
    return {
      candidates: flagsOf(command).map((f) => ({ value: `--${f}`, description: FLAG_HELP[f][1] })),
      directive: DIRECTIVE.noFileComp,
    };
  }
  if (name === undefined) return { candidates: commandNames(commands), directive: DIRECTIVE.noFileComp };
  if (command === undefined) return { candidates: [], directive: DIRECTIVE.noFileComp };
  return { candidates: argumentsOf(command, args, commands), directive: DIRECTIVE.noFileComp };
}

/**
 * `__complete`'s answer for the words typed so far, the last being the one under the cursor
 * (empty after a space): the candidates that start with it, then `:DIRECTIVE`.
 */
export function complete(commands: readonly Command[], words: readonly string[]): string {
  const current = words.at(-1) ?? '';
  const { candidates, directive, prefix = '' } = answer(commands, words.length === 0 ? [''] : words);
  const lines = candidates
    .map((c) => ({ ...c, value: `${prefix}${c.value}` }))
    .filter((c) => c.value.startsWith(current))
    // One line each; a tab or newline inside a description would break the protocol.
    .map((c) => (c.description ? `${c.value}\t${c.description.replace(/\s+/g, ' ')}` : c.value));
  return [...lines, `:${directive}`].join('\n') + '\n';
}

const BASH = `# bash completion for quotactl (and kubectl-quota, the same program as a kubectl plugin).
# Load it in this shell:     source <(quotactl completion bash)
# or for every new shell:    quotactl completion bash > ~/.local/share/bash-completion/completions/quotactl
# The program completes itself (quotactl __complete WORD...), so the script never goes stale.
_quotactl_complete() {
    local cur=\${COMP_WORDS[COMP_CWORD]} tab=$'\\t' out line directive=0
    out=$("\${COMP_WORDS[0]}" __complete "\${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur" 2>/dev/null) || return 0
    COMPREPLY=()
    while IFS= read -r line; do
        case $line in
            :*) directive=\${line#:} ;;
            "$cur"*) COMPREPLY+=("\${line%%"$tab"*}") ;;
        esac
    done <<<"$out"
    if ((\${#COMPREPLY[@]} == 0 && (directive & 4) == 0)); then
        # A flag that takes a file (-f, --ca-file): the shell's own file names.
        compopt -o filenames 2>/dev/null
        while IFS= read -r line; do COMPREPLY+=("$line"); done < <(compgen -f -- "$cur")
    fi
}
complete -F _quotactl_complete quotactl kubectl-quota
`;

const ZSH = `#compdef quotactl kubectl-quota
# zsh completion for quotactl (and kubectl-quota, the same program as a kubectl plugin).
# Load it in this shell:     source <(quotactl completion zsh)
# or install it:             quotactl completion zsh > "\${fpath[1]}/_quotactl"
# The program completes itself (quotactl __complete WORD...), so the script never goes stale.
_quotactl() {
    local out line value description directive=0
    local -a values
    out=$("\${words[1]}" __complete "\${(@)words[2,CURRENT]}" 2>/dev/null) || return 1
    for line in "\${(@f)out}"; do
        if [[ $line == :* ]]; then
            directive=\${line#:}
            continue
        fi
        value=\${line%%$'\\t'*}
        description=
        [[ $line == *$'\\t'* ]] && description=\${line#*$'\\t'}
        values+=("\${value//:/\\\\:}\${description:+:$description}")
    done
    if (( \${#values} )); then
        _describe -t values quotactl values
    elif (( (directive & 4) == 0 )); then
        _files
    fi
}
if [[ $funcstack[1] == _quotactl ]]; then
    _quotactl "$@"
else
    compdef _quotactl quotactl kubectl-quota
fi
`;

/** The script `quotactl completion SHELL` prints. */
export function completionScript(shell: (typeof SHELLS)[number]): string {
  return shell === 'bash' ? BASH : ZSH;
}
