import { LedgerError, type DefinitionChange, type DefinitionQueries, type Page } from '@quota/ledger';
import type { EventsQueryDto } from './audit.dto.js';

const DEFAULT_PAGE = 100;

/** `GET …/{resourcequotas|limitranges}/{name}/history`: every change of its definition, 404 if it never existed. */
export async function definitionHistory(definitions: DefinitionQueries, namespace: string, kind: 'quota' | 'limitRange', name: string, query: EventsQueryDto): Promise<Page<DefinitionChange>> {
  const page = await definitions.definitionHistory(namespace, kind, name, { ...(query.after ? { after: query.after } : {}), limit: query.limit ?? DEFAULT_PAGE });
  const resource = kind === 'quota' ? 'resourcequotas' : 'limitranges';
  if (!page) throw new LedgerError('NotFound', `${resource} "${name}" has no history in namespace ${namespace}: it never existed there`, { kind: resource, name });
  return page;
}
