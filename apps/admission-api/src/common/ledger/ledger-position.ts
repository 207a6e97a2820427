import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import type { Response } from 'express';

/**
 * The header on every write's answer that names the ledger position (ledger_events.position,
 * a decimal string) the write stands on: the last event it appended or, when it appended
 * nothing, the existing event it points to (README, "Read your writes"). A read that must see
 * the write passes it back as `?minPosition=`. A header, so Kubernetes objects keep their
 * shape: their `metadata.resourceVersion` is the object's version in its stream, which a PUT
 * compares for optimistic concurrency, not a position.
 */
export const LEDGER_POSITION_HEADER = 'X-Ledger-Position';

/** Sets the header when the write has a position; one that stands on no event (a denial, a dry run) answers without it. */
export function sendPosition(response: Response, position: string | undefined): void {
  if (position !== undefined) response.setHeader(LEDGER_POSITION_HEADER, position);
}

/** The route answers the header: documented on each of its success statuses in the OpenAPI document. */
export const AnswersPosition = (...statuses: number[]): MethodDecorator =>
  applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: '',
        headers: {
          [LEDGER_POSITION_HEADER]: {
            description:
              'The ledger position of the event this write stands on; pass it as ?minPosition= to a history read that must see the write. Absent when it stands on none (a denial, a dry run).',
            schema: { type: 'string', pattern: '^[0-9]{1,18}$' },
          },
        },
      }),
    ),
  );
