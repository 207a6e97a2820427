import { Body, Controller, Delete, Get, HttpCode, Inject, Put, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { limitRangeForLedger, type LimitRange, type LimitRangeDefinition } from '@quota/domain';
import { DefinitionQueries, LedgerCommands, type DefinitionChange, type LimitRangeView, type Page } from '@quota/ledger';
import { renderMetadata } from '../common/kube/kube-object.js';
import { NamespaceParam, ObjectNameParam } from '../common/kube/path-params.js';
import { EventsQueryDto } from '../audit/audit.dto.js';
import { dtoValidationPipe } from '../common/kube/validation.js';
import { Allow } from '../auth/roles.decorator.js';
import { JsonBody } from '../common/edge/body-guard.js';
import { AnswersPosition } from '../common/ledger/ledger-position.js';
import { withoutSystemAnnotations } from '../definitions/cluster-managed.js';
import { DefinitionHandlers, userMetadata, type DefinitionKind, type DefinitionList } from '../definitions/definition-handlers.js';

export function renderLimitRange(view: LimitRangeView): LimitRange {
  return {
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: renderMetadata({
      name: view.definition.name,
      namespace: view.namespace,
      version: view.version,
      createdAt: view.createdAt,
      ...(view.definition.metadata ? { metadata: view.definition.metadata } : {}),
    }),
    spec: view.definition.spec,
  };
}

/**
 * Admin CRUD of LimitRange. A stored LimitRange is what the API server would store: its
 * defaulting applied (a Container item's missing `default` comes from `max`, ...), then
 * validated, so a read shows the defaults admission will use.
 */
@Controller('v1/namespaces/:namespace/limitranges')
export class LimitRangesController {
  private readonly serve: DefinitionHandlers<LimitRangeDefinition, LimitRangeView, LimitRange>;

  constructor(@Inject(LedgerCommands) ledger: LedgerCommands, @Inject(DefinitionQueries) definitions: DefinitionQueries) {
    this.serve = new DefinitionHandlers(limitRangeKind(ledger, definitions));
  }

  @Allow('admin')
  @JsonBody('definition')
  @AnswersPosition(201, 200)
  @Put(':name')
  put(
    @NamespaceParam() namespace: string,
    @ObjectNameParam() name: string,
    @Body() raw: unknown,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<LimitRange> {
    return this.serve.put(namespace, name, raw, request, response);
  }

  @Allow('admin', 'auditor', 'admission')
  @Get(':name')
  get(@NamespaceParam() namespace: string, @ObjectNameParam() name: string): Promise<LimitRange> {
    return this.serve.get(namespace, name);
  }

  /** Every change of its definition: who, when, before and after (also after it was deleted). */
  @Allow('admin', 'auditor')
  @Get(':name/history')
  history(
    @NamespaceParam() namespace: string,
    @ObjectNameParam() name: string,
    @Query(dtoValidationPipe()) query: EventsQueryDto,
  ): Promise<Page<DefinitionChange>> {
    return this.serve.history(namespace, name, query);
  }

  @Allow('admin', 'auditor', 'admission')
  @Get()
  list(@NamespaceParam() namespace: string): Promise<DefinitionList<LimitRange>> {
    return this.serve.list(namespace);
  }

  @Allow('admin')
  @AnswersPosition(200)
  @Delete(':name')
  @HttpCode(200)
  delete(
    @NamespaceParam() namespace: string,
    @ObjectNameParam() name: string,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<LimitRange> {
    return this.serve.delete(namespace, name, request, response);
  }
}

/** LimitRange as a definition kind: defaulted and validated as the API server stores it, its quantities canonical. */
function limitRangeKind(
  ledger: LedgerCommands,
  definitions: DefinitionQueries,
): DefinitionKind<LimitRangeDefinition, LimitRangeView, LimitRange> {
  return {
    kind: 'LimitRange',
    resource: 'limitranges',
    apiVersion: 'v1',
    stream: 'namespace',
    definitionOf(body, name) {
      const { spec, metadata } = limitRangeForLedger(body, name);
      return { name, spec, metadata: userMetadata(metadata, withoutSystemAnnotations) };
    },
    // One that came from the cluster's LimitRange object is changed there, not here (409, decided in the write's transaction).
    put: (namespace, definition, options) => ledger.putLimitRange(namespace, definition, { ...options, unmanagedOnly: true }),
    remove: (namespace, name, options) => ledger.deleteLimitRange(namespace, name, { ...options, unmanagedOnly: true }),
    history: (namespace, name, page) => definitions.definitionHistory(namespace, 'limitRange', name, page),
    render: renderLimitRange,
    async read(namespace, name) {
      const view = await definitions.getLimitRange(namespace, name);
      return view ? renderLimitRange(view) : undefined;
    },
    async readAll(namespace) {
      return (await definitions.listLimitRanges(namespace)).map(renderLimitRange);
    },
  };
}
