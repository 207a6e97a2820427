import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * The dependency rules of docs/style.md are lint rules; these cases prove the rules bite
 * (a rule that cannot fail protects nothing).
 */
const eslint = new ESLint({ cwd: process.cwd() });

async function violations(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId?.startsWith('no-restricted')).map((m) => m.message);
}

describe('dependency rules', () => {
  it.each([
    ["import { Injectable } from '@nestjs/common';", /no framework/],
    ["import { DataSource } from 'typeorm';", /no framework/],
    ["import pg from 'pg';", /no framework/],
    ["import { Queue } from 'bullmq';", /no framework/],
    ["import { IsString } from 'class-validator';", /no framework/],
    ["import { readFileSync } from 'node:fs';", /no I\/O/],
    ["import { randomUUID } from 'node:crypto';", /no I\/O/],
    ['export const now = Date.now();', /no clock/],
    ['export const now = new Date();', /no clock/],
    ['export const r = Math.random();', /no randomness/],
    ['export const id = crypto.randomUUID();', /randomness/],
    ["export const env = process.env['X'];", /no environment/],
    ["import { loadConfig } from '@quota/config';", /imports no other lib/],
  ])('libs/domain rejects `%s`', async (code, message) => {
    const found = await violations('libs/domain/src/quota/example.ts', code);
    expect(found.join('\n')).toMatch(message);
  });

  it('libs/domain may parse a timestamp it is given', async () => {
    expect(await violations('libs/domain/src/events/example.ts', "export const t = Date.parse('2026-01-01T00:00:00Z');")).toEqual([]);
  });

  it('apps reach libs only through their index alias', async () => {
    const found = await violations('apps/admission-api/src/example.ts', "import { Quantity } from '../../../libs/domain/src/quantity/quantity.js';");
    expect(found.join('\n')).toMatch(/index alias/);
    expect(await violations('apps/admission-api/src/example.ts', "import { Quantity } from '@quota/domain';")).toEqual([]);
  });

  it('apps never import each other', async () => {
    const found = await violations('apps/admission-api/src/example.ts', "import { x } from '../../../apps/reconciler/src/main.js';");
    expect(found.join('\n')).toMatch(/Apps never import each other/);
  });

  it('libs/config imports no lib, libs/ledger only the domain', async () => {
    expect((await violations('libs/config/src/example.ts', "import { Quantity } from '@quota/domain';")).join('\n')).toMatch(/imports no lib/);
    expect((await violations('libs/ledger/src/example.ts', "import { loadConfig } from '@quota/config';")).join('\n')).toMatch(/only @quota\/domain/);
    expect(await violations('libs/ledger/src/example.ts', "import { Quantity } from '@quota/domain';")).toEqual([]);
  });
});
