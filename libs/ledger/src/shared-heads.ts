import { Resources, type RawQuantities, type ResourceList, type SharedQuotaDefinition } from '@quota/domain';
import type { PendingEvent } from './rows.js';

/**
 * The heads of the shared quotas one transaction touches: each as its row was read
 * and locked, the namespaces' contributions kept current as the transaction's namespaces
 * decide, and written back in the group's one statement with a compare-and-set on `revision`.
 * A shared quota's usage is the sum of what the namespaces it covers contribute; each
 * namespace's contribution is in its own fold (SharedQuotaApplied), and the head holds the
 * copy that admission in any other namespace checks against.
 */
export interface SharedHeadJson {
  /** null once removed (the row stays, so that its stream's versions continue). */
  readonly definition: SharedQuotaDefinition | null;
  readonly createdAt?: number;
  readonly updatedAt?: number;
  /** Per covered namespace: what it contributes, canonical (every hard resource). */
  readonly members: Readonly<Record<string, RawQuantities>>;
}

export interface SharedHeadRow {
  readonly key: string;
  readonly revision: string;
  readonly version: string;
  readonly state: SharedHeadJson;
}

/** What the group's statement writes for one shared head. */
export interface SharedHeadPlan {
  readonly key: string;
  /** The revision read (the compare-and-set), and whether the row existed. */
  readonly base: { readonly revision: number; readonly existed: boolean };
  readonly revision: number;
  readonly version: number;
  readonly state: SharedHeadJson;
  /** Definition events of the shared quota's own stream. */
  readonly events: readonly PendingEvent[];
}

interface Entry {
  readonly key: string;
  readonly base: { readonly revision: number; readonly existed: boolean };
  version: number;
  definition: SharedQuotaDefinition | null;
  createdAt?: number;
  updatedAt?: number;
  members: Map<string, ResourceList>;
  total: ResourceList;
  events: PendingEvent[];
  dirty: boolean;
}

export class SharedHeads {
  private readonly entries = new Map<string, Entry>();

  constructor(rows: readonly SharedHeadRow[] = []) {
    for (const row of rows) this.take(row);
  }

  /** Adds a head as it was read and locked (or, with no row, a shared quota made in this transaction). */
  take(row: SharedHeadRow | { readonly key: string }): void {
    const state = 'state' in row ? row.state : undefined;
    const members = new Map(Object.entries(state?.members ?? {}).map(([ns, used]) => [ns, Resources.resourceList(used)] as const));
    let total: ResourceList = Resources.EMPTY;
    for (const used of members.values()) total = Resources.add(total, used);
    this.entries.set(row.key, {
      key: row.key,
      base: 'revision' in row ? { revision: Number(row.revision), existed: true } : { revision: 0, existed: false },
      version: 'version' in row ? Number(row.version) : 0,
      definition: state?.definition ?? null,
      ...(state?.createdAt === undefined ? {} : { createdAt: state.createdAt }),
      ...(state?.updatedAt === undefined ? {} : { updatedAt: state.updatedAt }),
      members,
      total,
      events: [],
      dirty: false,
    });
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** How many namespaces it covers now. */
  memberCount(key: string): number {
    return this.entry(key).members.size;
  }

  /** The usage of every covered namespace but this one. */
  elsewhere(key: string, namespace: string): ResourceList {
    const entry = this.entry(key);
    const here = entry.members.get(namespace);
    return here ? Resources.subtract(entry.total, here) : entry.total;
  }

  /** What a namespace contributes now (undefined: it is no longer covered). */
  setMember(key: string, namespace: string, used: ResourceList | undefined): void {
    const entry = this.entry(key);
    const before = entry.members.get(namespace);
    if (used === undefined ? before === undefined : before !== undefined && Resources.equals(before, used)) return;
    if (before) entry.total = Resources.subtract(entry.total, before);
    if (used === undefined) entry.members.delete(namespace);
    else {
      entry.members.set(namespace, used);
      entry.total = Resources.add(entry.total, used);
    }
    entry.dirty = true;
  }

  /** Appends a definition event to the shared quota's stream and sets its definition. */
  define(key: string, definition: SharedQuotaDefinition | null, event: Omit<PendingEvent, 'version'>, now: number): void {
    const entry = this.entry(key);
    entry.version++;
    entry.events.push({ ...event, version: entry.version });
    if (definition && !entry.definition) entry.createdAt = now;
    entry.definition = definition;
    entry.updatedAt = now;
    entry.dirty = true;
  }

  /** The heads this transaction changed, as the statement writes them. */
  plans(): SharedHeadPlan[] {
    return [...this.entries.values()]
      .filter((e) => e.dirty)
      .map((e) => ({
        key: e.key,
        base: e.base,
        revision: e.base.revision + 1,
        version: e.version,
        state: {
          definition: e.definition,
          ...(e.createdAt === undefined ? {} : { createdAt: e.createdAt }),
          ...(e.updatedAt === undefined ? {} : { updatedAt: e.updatedAt }),
          members: Object.fromEntries(
            [...e.members].sort(([a], [b]) => (a < b ? -1 : 1)).map(([ns, used]) => [ns, Resources.canonicalResourceList(used)]),
          ),
        },
        events: e.events,
      }));
  }

  private entry(key: string): Entry {
    const entry = this.entries.get(key);
    if (!entry) throw new Error(`shared quota head ${key} was not read in this transaction`);
    return entry;
  }
}
