import { LedgerError, type DefinitionChange, type DefinitionQueries, type Page, type PutOptions, type PutResult, type RemoveResult, type WriteOptions } from '@quota/ledger';
import type { Request, Response } from 'express';
import type { EventsQueryDto } from '../audit/audit.dto.js';
import { definitionHistory } from '../audit/definition-history.js';
import { requesterOf } from '../auth/requester.js';
import { readPutIdentity } from '../common/kube/kube-object.js';
import { sendPosition } from '../common/ledger/ledger-position.js';

/**
 * A definition kind served under /v1/namespaces/{namespace}/{resource}: how its body is checked
 * and stored, read back and rendered. Its controller declares the routes and the roles of each
 * (`@Allow`, where the OpenAPI document reads them) and hands every request to
 * DefinitionHandlers, so that every kind answers PUT, GET, list, history and DELETE alike.
 */
export interface DefinitionKind<D, V, O> {
  /** `ResourceQuota`: what a body must be, and (with `List`) what a list is. */
  readonly kind: string;
  /** `resourcequotas`: how errors name it. */
  readonly resource: string;
  /** Which stream of definition events its history reads. */
  readonly history: 'quota' | 'limitRange';
  /** The body checked and bounded, as the ledger stores it (its name, spec and user metadata). */
  definitionOf(body: Record<string, unknown>, name: string): D;
  put(namespace: string, definition: D, options: PutOptions): Promise<PutResult<V>>;
  remove(namespace: string, name: string, options: WriteOptions): Promise<RemoveResult<V>>;
  /** How a write's answer shows the object. */
  render(view: V): O;
  /** How a read shows one stored object (undefined: there is none), or every one of a namespace. */
  read(namespace: string, name: string): Promise<O | undefined>;
  readAll(namespace: string): Promise<O[]>;
}

/** The one set of handlers for every definition kind. */
export class DefinitionHandlers<D, V, O> {
  constructor(
    private readonly kind: DefinitionKind<D, V, O>,
    private readonly definitions: DefinitionQueries,
  ) {}

  /** 201 created or 200 replaced, with the position of the event it stands on. */
  async put(namespace: string, name: string, raw: unknown, request: Request, response: Response): Promise<O> {
    const { body, expectedVersion } = readPutIdentity(raw, namespace, name, this.kind.kind);
    const definition = this.kind.definitionOf(body, name);
    const result = await this.kind.put(namespace, definition, { actor: requesterOf(request), ...(expectedVersion === undefined ? {} : { expectedVersion }) });
    response.status(result.created ? 201 : 200);
    sendPosition(response, result.position);
    return this.kind.render(result.view);
  }

  async get(namespace: string, name: string): Promise<O> {
    const object = await this.kind.read(namespace, name);
    if (!object) throw new LedgerError('NotFound', `${this.kind.resource} "${name}" not found`, { kind: this.kind.resource, name });
    return object;
  }

  /** Every change of its definition: who, when, before and after (also after it was deleted). */
  history(namespace: string, name: string, query: EventsQueryDto): Promise<Page<DefinitionChange>> {
    return definitionHistory(this.definitions, namespace, this.kind.history, name, query);
  }

  async list(namespace: string): Promise<{ apiVersion: 'v1'; kind: string; metadata: Record<string, never>; items: O[] }> {
    return { apiVersion: 'v1', kind: `${this.kind.kind}List`, metadata: {}, items: await this.kind.readAll(namespace) };
  }

  /** 200 with its last state, and the position of the event that removed it. */
  async delete(namespace: string, name: string, request: Request, response: Response): Promise<O> {
    const removed = await this.kind.remove(namespace, name, { actor: requesterOf(request) });
    sendPosition(response, removed.position);
    return this.kind.render(removed.view);
  }
}

type UserMetadata = { readonly labels?: Readonly<Record<string, string>>; readonly annotations?: Readonly<Record<string, string>> };

/** The metadata a user sets and the ledger keeps: labels and annotations, the annotations filtered when `annotations` says how. */
export function userMetadata(metadata: UserMetadata | undefined, annotations: (all: Readonly<Record<string, string>>) => Record<string, string> = (all) => ({ ...all })) {
  return { ...(metadata?.labels ? { labels: metadata.labels } : {}), ...(metadata?.annotations ? { annotations: annotations(metadata.annotations) } : {}) };
}
