import type { Answer } from '../../support/api.js';
import type { KubeApi } from '../../support/kube-api.js';
import { applicable, describeOp, evolve, newWorld, type Op, type World } from './operations.js';
import {
  decisionOf,
  sameDecision,
  showDecision,
  showDifference,
  usageDifferences,
  type Decision,
  type UsageDifference,
} from './outcome.js';
import type { Scenario } from './scenario.js';
import { createNamespace, KubernetesSide, LedgerSide, type Side } from './sides.js';

/**
 * One run: a fresh pair of namespaces given the same scenario, then steps played on both, each
 * compared (the decision at once, Used once settled), until the steps run out or the first
 * disagreement (after which the two namespaces no longer hold the same objects).
 */

export interface Environment {
  readonly kube: KubeApi;
  readonly request: (method: string, path: string, body?: unknown) => Promise<Answer>;
  readonly databaseUrl: string;
}

export interface Disagreement {
  /** Index in `played` of the step that showed it. */
  readonly step: number;
  readonly op: Op;
  readonly what: 'decision' | 'usage';
  readonly details: readonly string[];
  /** Equal for the same failure (what shrinking keeps). */
  readonly signature: string;
  /** For a decision: what each side decided. */
  readonly decisions?: { readonly kubernetes: Decision; readonly ledger: Decision };
  /** For Used: the resources that differ. */
  readonly usage?: readonly UsageDifference[];
}

export interface RunResult {
  readonly played: readonly Op[];
  /** Steps whose decision and Used were compared. */
  readonly compared: number;
  readonly disagreement?: Disagreement;
  /** Known differences met on the way, where both sides refused (the run went on: nothing changed). */
  readonly known: readonly Disagreement[];
  readonly ms: number;
  /** Per kind of step: how many were played and the milliseconds they took, settling included. */
  readonly timings: Record<string, { count: number; ms: number }>;
  /** Compared decisions by outcome (allowed, or the kind of refusal). */
  readonly decisions: Record<string, number>;
}

export interface RunOptions {
  /** Hears each step. */
  readonly log?: (line: string) => void;
  /** Whether a disagreement is a known, deliberate difference. */
  readonly known?: (disagreement: Disagreement) => boolean;
  /** Whether steps may report a kubelet's status of a pod (World.kubelet). */
  readonly kubelet?: boolean;
  /** How long Used may take to agree after a step (default SETTLE_MS). */
  readonly settleMs?: number;
}

/** Where the steps come from: drawn as the world evolves, or a recorded list (skipping what no longer applies). */
export type OpSource = (world: World) => Op | undefined;

export function replaySource(ops: readonly Op[]): OpSource {
  let next = 0;
  return (world) => {
    while (next < ops.length) {
      const op = ops[next++]!;
      if (applicable(op, world)) return op;
    }
    return undefined;
  };
}

/** How long Used may take to agree after a step before it counts as a disagreement. */
const SETTLE_MS = 20_000;
const SETTLE_ROUNDS_MIN = 3;

/**
 * Until both sides' Used agree on every resource each quota limits: at once for a create (both
 * charge at admission, and a refusal changes nothing), else after each side recounted (a quota
 * sync, a reconcile), again and again until `settleMs` is over.
 */
async function settle(sides: [Side, Side], world: World, op: Op, settleMs = SETTLE_MS): Promise<UsageDifference[]> {
  const limited = Object.fromEntries(world.quotas.map((q) => [q.name, Object.keys(q.hard)]));
  const deadline = Date.now() + settleMs;
  let refresh = op.op !== 'create';
  for (let round = 0; ; round++) {
    if (refresh) await Promise.all(sides.map((side) => side.refresh()));
    const [kubernetes, ledger] = await Promise.all(sides.map((side) => side.usage()));
    const differences = usageDifferences(kubernetes!, ledger!, limited);
    if (differences.length === 0) return [];
    if (Date.now() > deadline && round >= SETTLE_ROUNDS_MIN) return differences;
    refresh = true;
  }
}

/**
 * One step on both sides: the decisions compared, the world evolved, Used settled and compared.
 * Answers the disagreement it showed, if any, and whether that was a known one the run survives.
 */
async function playStep(
  sides: [Side, Side],
  world: World,
  op: Op,
  step: number,
  options: RunOptions,
): Promise<{ disagreement?: Disagreement; goOn: boolean; decision: Decision }> {
  const log = options.log ?? (() => undefined);
  const answers = await Promise.all(sides.map((side) => side.perform(op, world)));
  const [k, l] = answers.map(decisionOf) as [Decision, Decision];
  const same = sameDecision(k, l);
  log(
    `  ${String(step).padStart(3)} ${describeOp(op).slice(0, 160)}\n      kubernetes: ${showDecision(k).slice(0, 300)}${same ? '' : `\n      ledger:     ${showDecision(l).slice(0, 300)}`}`,
  );
  let known: Disagreement | undefined;
  if (!same) {
    const said = [k.kind ?? 'allowed', l.kind ?? 'allowed'];
    const disagreement: Disagreement = {
      step,
      op,
      what: 'decision',
      details: [`kubernetes: ${showDecision(k)}`, `ledger: ${showDecision(l)}`],
      signature: signature('decision', op, said),
      decisions: { kubernetes: k, ledger: l },
    };
    // Both refused for different reasons (a known difference): nothing changed, the run can go on.
    if (k.allowed || l.allowed || !options.known?.(disagreement)) return { disagreement, goOn: false, decision: k };
    known = disagreement;
  }
  if (k.allowed) evolve(world, op, answers[0]!.body);
  const differences = await settle(sides, world, op, options.settleMs);
  if (differences.length === 0) return { ...(known ? { disagreement: known } : {}), goOn: true, decision: k };
  const details = differences.map(showDifference);
  log(`      Used differs: ${details.join('; ')}`);
  return {
    disagreement: {
      step,
      op,
      what: 'usage',
      details,
      usage: differences,
      signature: signature(
        'usage',
        op,
        differences.map((d) => d.resource),
      ),
    },
    goOn: false,
    decision: k,
  };
}

let runs = 0;

/** Plays `source` (at most `maxSteps` steps) on a new pair of namespaces. */
export async function run(
  env: Environment,
  scenario: Scenario,
  source: OpSource,
  maxSteps: number,
  options: RunOptions = {},
): Promise<RunResult> {
  const started = Date.now();
  const suffix = `${process.pid}-${++runs}`;
  const sides: [Side, Side] = [
    new KubernetesSide(env.kube, `diff-k-${suffix}`),
    new LedgerSide(env.kube, env.request, env.databaseUrl, `diff-l-${suffix}`),
  ];
  const played: Op[] = [];
  const known: Disagreement[] = [];
  const timings: RunResult['timings'] = {};
  const decisions: Record<string, number> = {};
  let compared = 0;
  const result = (disagreement?: Disagreement): RunResult => ({
    played,
    compared,
    known,
    timings,
    decisions,
    ms: Date.now() - started,
    ...(disagreement ? { disagreement } : {}),
  });
  try {
    await Promise.all(sides.map((side) => createNamespace(env.kube, side.namespace, side.label)));
    // Defined now, or by the `define` step (Scenario.definedAfter).
    if (scenario.definedAfter === undefined) await Promise.all(sides.map((side) => side.define(scenario)));
    const world = newWorld(scenario, options.kubelet);
    for (let step = 0; step < maxSteps; step++) {
      const op = source(world);
      if (!op) break;
      played.push(op);
      const begun = Date.now();
      const { disagreement, goOn, decision } = await playStep(sides, world, op, step, options);
      if (!goOn) return result(disagreement);
      if (disagreement) known.push(disagreement);
      compared++;
      const outcome = `${op.op}: ${decision.kind ?? 'allowed'}`;
      decisions[outcome] = (decisions[outcome] ?? 0) + 1;
      const timing = (timings[op.op] ??= { count: 0, ms: 0 });
      timing.count++;
      timing.ms += Date.now() - begun;
    }
    return result();
  } finally {
    await Promise.all(sides.map((side) => side.dispose().catch(() => undefined)));
  }
}

/** The same failure: the same comparison failing on the same kind of step. */
export function sameFailure(a: Disagreement, b: Disagreement): boolean {
  return a.signature === b.signature;
}

/** What makes two disagreements the same: the comparison, the kind of step, and what each side said or which Used differ. */
function signature(what: Disagreement['what'], op: Op, said: readonly string[]): string {
  const kind = 'kind' in op ? op.kind : op.op === 'create' ? op.manifest.kind : '';
  return [what, op.op, kind, ...said].join(':');
}
