import { isAbsolute, resolve } from 'node:path';
import { CLI_DEV_TOKEN_FILE, loadCliConfig, type CliConfig } from '@quota/config';
import { GLOBAL_FLAGS, parse, type Flags } from './args.js';
import { ApiClient, ApiError } from './client.js';
import { applyCommand } from './commands/apply.js';
import { decisionsCommand, historyCommand, usageCommand } from './commands/audit.js';
import { describeCommand, getCommand } from './commands/get.js';
import { commandHelp, overview } from './commands/help.js';
import { deleteCommand } from './commands/delete.js';
import { queueCommand, waitCommand } from './commands/queue.js';
import { commitCommand, releaseCommand, reserveCommand } from './commands/reservations.js';
import { webhookConfigCommand } from './commands/webhooks.js';
import { SHELLS, complete, completionScript } from './completion.js';
import { DEFAULT_OUTPUTS, print, readInput, type Command, type Context, type Io, type OutputFormat } from './context.js';
import { EXIT, UsageError, errorMessage, exitCodeOf, type ExitCode } from './errors.js';
import { contextNamespace } from './kubeconfig.js';

export { EXIT, type ExitCode } from './errors.js';
export type { Io } from './context.js';

const versionCommand: Command = {
  name: 'version',
  summary: "print quotactl's version",
  synopsis: 'version [-o json|yaml]',
  flags: [],
  needsServer: false,
  run: async (ctx) => {
    const version = ctx.io.version ?? 'unknown';
    print(ctx, { clientVersion: { gitVersion: `v${version}` } }, () => `Client Version: v${version}\n`);
    return EXIT.ok;
  },
};

/** `help` itself: the overview, or one command's help. */
const helpCommand: Command = {
  name: 'help',
  summary: 'help about any command',
  synopsis: 'help [COMMAND]',
  flags: [],
  needsServer: false,
  run: async (ctx) => {
    const [name, ...rest] = ctx.args;
    if (rest.length > 0) throw new UsageError('help takes one command name');
    if (name === undefined) {
      ctx.io.stdout(overview(COMMANDS));
      return EXIT.ok;
    }
    ctx.io.stdout(commandHelp(find(name)));
    return EXIT.ok;
  },
};

const completionCommand: Command = {
  name: 'completion',
  summary: 'print a shell completion script (bash or zsh)',
  synopsis: 'completion bash|zsh',
  description: [
    'Prints a script that completes commands, resource types, flags and their values (-o, -f files,',
    '--failure-policy) for quotactl and kubectl-quota. The script asks the program itself',
    "(quotactl __complete WORD…), as kubectl's does; nothing is asked of the server. For",
    '`kubectl quota <TAB>` (kubectl 1.26 or newer) put kubectl_complete-quota on PATH: the',
    'npm package installs it, or link it to the kubectl-quota file.',
  ].join('\n'),
  flags: [],
  examples: ['source <(quotactl completion bash)', 'quotactl completion zsh > "${fpath[1]}/_quotactl"'],
  needsServer: false,
  run: async (ctx) => {
    const [shell, ...rest] = ctx.args;
    const known = SHELLS.find((s) => s === shell);
    if (known === undefined || rest.length > 0)
      throw new UsageError(
        `completion takes one shell: ${SHELLS.join(' or ')}${shell === undefined ? '' : `, got ${JSON.stringify(ctx.args.join(' '))}`}`,
      );
    ctx.io.stdout(completionScript(known));
    return EXIT.ok;
  },
};

export const COMMANDS: readonly Command[] = [
  applyCommand,
  getCommand,
  describeCommand,
  deleteCommand,
  usageCommand,
  historyCommand,
  decisionsCommand,
  reserveCommand,
  commitCommand,
  releaseCommand,
  queueCommand,
  waitCommand,
  webhookConfigCommand,
  completionCommand,
  versionCommand,
  helpCommand,
];

/** What the shells call on TAB (completion.ts); not a command a person types, so before any parsing. */
const COMPLETE = '__complete';

function find(name: string): Command {
  const command = COMMANDS.find((c) => c.name === name || c.aliases?.includes(name));
  if (!command) throw new UsageError(`unknown command "${name}" for "quotactl"\nRun 'quotactl --help' for usage.`);
  return command;
}

/** A DNS-1123 label, as Kubernetes requires of namespace names; checked here so a typo costs no request. */
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * quotactl: parses argv, runs the command, and turns every failure into kubectl's message on
 * stderr and an exit code (errors.ts lists them). Never throws.
 */
export async function run(argv: readonly string[], io: Io): Promise<ExitCode> {
  let config: CliConfig | undefined;
  if (argv[0] === COMPLETE) {
    io.stdout(complete(COMMANDS, argv.slice(1)));
    return EXIT.ok;
  }
  try {
    const { positionals, flags, given } = parse(argv);
    const [name, ...args] = positionals;
    if (name === undefined) {
      // kubectl prints its help when given nothing; so do we, on stdout, successfully.
      io.stdout(overview(COMMANDS));
      return EXIT.ok;
    }
    const command = find(name);
    if (flags.help) {
      io.stdout(commandHelp(command));
      return EXIT.ok;
    }
    const allowed = new Set([...GLOBAL_FLAGS, ...command.flags]);
    const stray = given.find((flag) => !allowed.has(flag.name));
    if (stray) throw new UsageError(`unknown flag: ${stray.rawName} (for ${command.name}; see quotactl ${command.name} --help)`);

    const output = outputFormat(flags.output, command);
    const namespace = await namespaceOf(io, flags, command);

    let client: ApiClient | undefined;
    if (command.needsServer) {
      config = await settings(io, flags);
      client = await connect(io, config);
    }
    const ctx: Context = {
      io,
      args,
      flags,
      output,
      namespace,
      namespaceGiven: flags.namespace !== undefined,
      get client(): ApiClient {
        // Only commands that declare needsServer get one: a command that forgot to is a bug, said loudly.
        if (!client) throw new Error(`${command.name} has no connection to the server`);
        return client;
      },
      now: io.now ?? (() => Date.now()),
    };
    return await command.run(ctx);
  } catch (error) {
    io.stderr(`${errorMessage(error)}${hint(error, config)}\n`);
    return exitCodeOf(error);
  }
}

/**
 * `-n`, else the namespace of the kubeconfig context in use (kubeconfig.ts), else "default", as
 * kubectl chooses; the kubeconfig is read only by commands that take -n.
 */
async function namespaceOf(io: Io, flags: Flags, command: Command): Promise<string> {
  const fromContext = flags.namespace === undefined && command.flags.includes('namespace') ? await contextNamespace(io, flags) : undefined;
  const namespace = flags.namespace ?? fromContext?.namespace ?? 'default';
  if (!NAMESPACE.test(namespace)) {
    const where = fromContext ? ` (the namespace of kubeconfig context "${fromContext.context}")` : '';
    throw new UsageError(
      `invalid namespace ${JSON.stringify(namespace)}${where}: a lowercase RFC 1123 label (letters, digits and '-', at most 63)`,
    );
  }
  return namespace;
}

/** `-o` as the command can print it (`wide` is the table); kubectl's words for any other. */
function outputFormat(raw: string | undefined, command: Command): OutputFormat {
  const allowed = command.outputs ?? DEFAULT_OUTPUTS;
  const format = raw === undefined || raw === 'wide' ? 'table' : allowed.find((f) => f === raw);
  if (format === undefined)
    throw new UsageError(
      `unable to match a printer suitable for the output format ${JSON.stringify(raw)}, allowed formats are: ${[...allowed].sort().join(',')}`,
    );
  return format;
}

/** Flags over QUOTA_LEDGER_* over defaults, and the development token when no other is given. */
async function settings(io: Io, flags: Flags): Promise<CliConfig> {
  return loadCliConfig(
    io.env ?? {},
    {
      server: flags.server,
      token: flags.token,
      certificateAuthority: flags['certificate-authority'],
      insecureSkipTlsVerify: flags['insecure-skip-tls-verify'],
      requestTimeout: flags['request-timeout'],
    },
    await devToken(io),
  );
}

/** The client, with the CA read before anything is sent (an unreadable CA is a usage error). */
async function connect(io: Io, config: CliConfig): Promise<ApiClient> {
  const ca = config.caFile !== undefined ? await readInput(io, config.caFile) : undefined;
  if (ca !== undefined && !ca.includes('-----BEGIN CERTIFICATE-----'))
    throw new UsageError(`${config.caFile} is not a PEM certificate (no -----BEGIN CERTIFICATE----- line)`);
  return new ApiClient({
    server: config.server,
    token: config.token,
    ca,
    insecureSkipTlsVerify: config.insecureSkipTlsVerify,
    timeoutMs: config.requestTimeoutMs,
    userAgent: `quotactl/${io.version ?? 'unknown'}`,
    onWarning: warningPrinter(io),
  });
}

/** kubectl's warning handler: `Warning: text` on stderr as each answer brings it, each text once per run. */
function warningPrinter(io: Io): (text: string) => void {
  const seen = new Set<string>();
  return (text) => {
    if (seen.has(text)) return;
    seen.add(text);
    io.stderr(`Warning: ${text}\n`);
  };
}

/** `.quota-ledger/dev-token` of the working directory: absent is normal (not a development checkout). */
async function devToken(io: Io): Promise<string | undefined> {
  const path = isAbsolute(CLI_DEV_TOKEN_FILE) ? CLI_DEV_TOKEN_FILE : resolve(io.cwd, CLI_DEV_TOKEN_FILE);
  try {
    return await io.readFile(path);
  } catch {
    return undefined;
  }
}

/** A second line for the failures whose fix is not obvious from the server's message: which token a 401 refused. */
function hint(error: unknown, config: CliConfig | undefined): string {
  if (!(error instanceof ApiError) || error.status !== 401 || config === undefined) return '';
  switch (config.tokenSource) {
    case undefined:
      return `\nNo token was sent: pass --token, set QUOTA_LEDGER_TOKEN, or run quotactl where \`npm start\` wrote ${CLI_DEV_TOKEN_FILE}.`;
    case 'dev-token':
      return `\nThe token came from ./${CLI_DEV_TOKEN_FILE}: is the server the one \`npm start\` started here?`;
    case 'environment':
      return '\nThe token came from QUOTA_LEDGER_TOKEN.';
    default:
      return '';
  }
}
