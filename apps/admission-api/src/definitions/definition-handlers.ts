import { WARNINGS_MAX } from '@quota/domain';
import {
  LedgerError,
  type DefinitionChange,
  type Page,
  type PutOptions,
  type PutResult,
  type RemoveResult,
  type WriteOptions,
} from '@quota/ledger';
import type { Request, Response } from 'express';
import type { EventsQueryDto } from '../audit/audit.dto.js';
import { requesterOf } from '../auth/requester.js';
import { warningHeader } from '../common/kube/warning-header.js';
import { readPutIdentity } from '../common/kube/kube-object.js';
import { sendPosition } from '../common/ledger/ledger-position.js';

const DEFAULT_PAGE = 100;

/** The namespace a cluster-scoped kind's handlers are given (its paths name none): its objects' metadata has none. */
export const CLUSTER_SCOPED = '';

/** A page of a definition's changes, as the ledger reads them. */
export interface HistoryPage {
  readonly after?: string;
  readonly limit: number;
}

/**
 * A definition kind served by the admin API (ResourceQuota, LimitRange, ClusterResourceQuota,
 * HierarchicalResourceQuota, Namespace): how its body is checked and stored, read back and
 * rendered. Its controller declares the routes and the roles of each (`@Allow`, where the OpenAPI
 * document reads them) and hands every request to DefinitionHandlers, so that every kind answers
 * PUT, GET, list, history and DELETE alike. A cluster-scoped kind's handlers are given
 * CLUSTER_SCOPED for the namespace.
 */
export interface DefinitionKind<D, V, O> {
  /** `ResourceQuota`: what a body must be, and (with `List`) what a list is. */
  readonly kind: string;
  /** The apiVersion of its list (`v1`, `quota.openshift.io/v1`). */
  readonly apiVersion: string;
  /** `resourcequotas`: how errors name it. */
  readonly resource: string;
  /** How a GET's 404 names it, when not as `resource` (a CRD's resource with its group). */
  readonly notFoundAs?: string;
  /** Whether its objects have no namespace: the body's `metadata.namespace` is dropped before it is checked. */
  readonly clusterScoped?: boolean;
  /**
   * Where its changes are recorded: in its namespace's stream (a 404 of its history names the
   * namespace), or in a stream of its own (a Namespace, a shared quota).
   */
  readonly stream: 'namespace' | 'own';
  /** The body checked and bounded, as the ledger stores it (its name, spec and user metadata). */
  definitionOf(body: Record<string, unknown>, name: string, namespace: string): D;
  put(namespace: string, definition: D, options: PutOptions): Promise<PutResult<V>>;
  remove(namespace: string, name: string, options: WriteOptions): Promise<RemoveResult<V>>;
  /** How a write's answer shows the object. */
  render(view: V): O;
  /** How a read shows one stored object (undefined: there is none), or every one of a namespace (a kind without a list has none). */
  read(namespace: string, name: string): Promise<O | undefined>;
  readAll?(namespace: string): Promise<O[]>;
  /** A page of the changes of its definition (undefined: it never existed). */
  history(namespace: string, name: string, page: HistoryPage): Promise<Page<DefinitionChange> | undefined>;
  /** What a stored write warns of, as `Warning` headers, at most WARNINGS_MAX (a quota naming a count admission never sees). */
  warnings?(definition: D): readonly string[];
}

/** A kind's list, as Kubernetes answers one. */
export interface DefinitionList<O> {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: Record<string, never>;
  readonly items: O[];
}

/** The one set of handlers for every definition kind. */
export class DefinitionHandlers<D, V, O> {
  constructor(private readonly kind: DefinitionKind<D, V, O>) {}

  /** 201 created or 200 replaced, with the position of the event it stands on. */
  async put(namespace: string, name: string, raw: unknown, request: Request, response: Response): Promise<O> {
    const identity = readPutIdentity(raw, namespace, name, this.kind.kind);
    const { expectedVersion } = identity;
    const definition = this.kind.definitionOf(this.kind.clusterScoped ? withoutNamespace(identity.body) : identity.body, name, namespace);
    const result = await this.kind.put(namespace, definition, {
      actor: requesterOf(request),
      ...(expectedVersion === undefined ? {} : { expectedVersion }),
    });
    response.status(result.created ? 201 : 200);
    sendPosition(response, result.position);
    for (const warning of (this.kind.warnings?.(definition) ?? []).slice(0, WARNINGS_MAX))
      response.append('Warning', warningHeader(warning));
    return this.kind.render(result.view);
  }

  async get(namespace: string, name: string): Promise<O> {
    const object = await this.kind.read(namespace, name);
    if (!object)
      throw new LedgerError('NotFound', `${this.kind.notFoundAs ?? this.kind.resource} "${name}" not found`, {
        kind: this.kind.resource,
        name,
      });
    return object;
  }

  /** Every change of its definition: who, when, before and after (also after it was deleted). */
  async history(namespace: string, name: string, query: EventsQueryDto): Promise<Page<DefinitionChange>> {
    const page = await this.kind.history(namespace, name, {
      ...(query.after ? { after: query.after } : {}),
      limit: query.limit ?? DEFAULT_PAGE,
    });
    if (page) return page;
    const { resource } = this.kind;
    const never =
      this.kind.stream === 'namespace'
        ? `has no history in namespace ${namespace}: it never existed there`
        : 'has no history: it never existed';
    throw new LedgerError('NotFound', `${resource} "${name}" ${never}`, { kind: resource, name });
  }

  async list(namespace: string): Promise<DefinitionList<O>> {
    if (!this.kind.readAll) throw new Error(`${this.kind.kind} has no list`);
    return { apiVersion: this.kind.apiVersion, kind: `${this.kind.kind}List`, metadata: {}, items: await this.kind.readAll(namespace) };
  }

  /** 200 with its last state, and the position of the event that removed it. */
  async delete(namespace: string, name: string, request: Request, response: Response): Promise<O> {
    const removed = await this.kind.remove(namespace, name, { actor: requesterOf(request) });
    sendPosition(response, removed.position);
    return this.kind.render(removed.view);
  }
}

function withoutNamespace(body: Record<string, unknown>): Record<string, unknown> {
  const { namespace: _ignored, ...metadata } = (body['metadata'] ?? {}) as Record<string, unknown>;
  return { ...body, metadata };
}

type UserMetadata = { readonly labels?: Readonly<Record<string, string>>; readonly annotations?: Readonly<Record<string, string>> };

/** The metadata a user sets and the ledger keeps: labels and annotations, the annotations filtered when `annotations` says how. */
export function userMetadata(
  metadata: UserMetadata | undefined,
  annotations: (all: Readonly<Record<string, string>>) => Record<string, string> = (all) => ({ ...all }),
) {
  return {
    ...(metadata?.labels ? { labels: metadata.labels } : {}),
    ...(metadata?.annotations ? { annotations: annotations(metadata.annotations) } : {}),
  };
}
