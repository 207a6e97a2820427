import { describe, expect, it } from 'vitest';
import type { RegisteredRule } from '@quota/domain';
import { WebhookRoutes } from './webhook-routes.js';

const oldRules: RegisteredRule[] = [{ operations: ['CREATE'], apiGroups: [''], resources: ['configmaps', 'secrets'] }];
const everyKind: RegisteredRule[] = [{ operations: ['CREATE'], apiGroups: ['*'], resources: ['*'], scope: 'Namespaced' }];

function routes(answers: (readonly RegisteredRule[] | 'not-found' | Error)[], counted: Record<string, number>) {
  const logs: string[] = [];
  const checker = new WebhookRoutes(
    'quota-ledger',
    {
      rules: async () => {
        const answer = answers.shift() ?? everyKind;
        if (answer instanceof Error) throw answer;
        return answer;
      },
      counted: async () => new Map(Object.entries(counted)),
    },
    { periodMs: 60_000, log: (level, msg) => logs.push(`${level}: ${msg.split(':')[0]}`) },
  );
  return { checker, logs };
}

describe('WebhookRoutes: the quotas object counts the registered configuration does not send', () => {
  const counted = { 'count/configmaps': 2, 'count/poddisruptionbudgets.policy': 3, 'count/resourcequotas': 1 };

  it('reports them with the quotas naming each, logs when the set changes, and clears what a newer registration sends', async () => {
    const { checker, logs } = routes([oldRules, oldRules, everyKind], counted);
    await checker.check();
    expect(checker.totals()).toEqual(
      new Map([
        ['count/poddisruptionbudgets.policy', 3],
        ['count/resourcequotas', 1],
      ]),
    );
    expect(checker.readinessDetail()).toEqual({
      webhookRoutes: {
        configuration: 'quota-ledger',
        unroutedCounts: { 'count/poddisruptionbudgets.policy': 3, 'count/resourcequotas': 1 },
      },
    });
    await checker.check(); // the same: no second line
    await checker.check();
    expect(checker.totals()).toEqual(new Map([['count/resourcequotas', 1]]));
    expect(logs).toEqual([
      'warn: quotas name object counts the registered webhooks are not sent',
      'warn: quotas name object counts the registered webhooks are not sent',
    ]);
  });

  it('a configuration not registered sends no count; one it may not read reports none and says why', async () => {
    const { checker, logs } = routes(['not-found', new Error('GET …: HTTP 403: forbidden'), everyKind], { 'count/configmaps': 1 });
    await checker.check();
    expect(checker.totals()).toEqual(new Map([['count/configmaps', 1]]));
    expect(checker.readinessDetail()).toMatchObject({ webhookRoutes: { error: expect.stringContaining('is not registered') } });
    await checker.check();
    expect(checker.totals()).toEqual(new Map());
    expect(checker.readinessDetail()).toEqual({
      webhookRoutes: {
        configuration: 'quota-ledger',
        error: 'ValidatingWebhookConfiguration quota-ledger not read: GET …: HTTP 403: forbidden',
      },
    });
    await checker.check();
    expect(checker.readinessDetail()).toEqual({ webhookRoutes: { configuration: 'quota-ledger' } });
    expect(logs).toEqual([
      'warn: ValidatingWebhookConfiguration quota-ledger is not registered',
      'warn: quotas name object counts the registered webhooks are not sent',
      'warn: ValidatingWebhookConfiguration quota-ledger not read',
      'info: ValidatingWebhookConfiguration quota-ledger read again',
    ]);
  });
});
