// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The dependency rules of docs/style.md, enforced: libs/domain is pure (no framework, no
 * I/O, no clock, no randomness); libs/config imports no lib; libs are reached only through
 * their index alias; apps never import each other.
 */
const frameworkAndIo = [
  '@nestjs/*',
  'typeorm',
  'typeorm/*',
  'pg',
  'pg-*',
  'bullmq',
  'ioredis',
  'class-validator',
  'class-transformer',
  'node:*',
  'fs',
  'fs/*',
  'net',
  'http',
  'https',
  'child_process',
  'crypto',
  'os',
  'path',
  'url',
  'worker_threads',
  'cluster',
  'dgram',
  'dns',
  'tls',
  'process',
];
const deepLibImports = {
  group: ['**/libs/*/src/**', '@quota/*/*'],
  message:
    'Reach a lib only through its index alias (@quota/domain, @quota/ledger, @quota/config, @quota/inventory, @quota/jobs, @quota/ops, @quota/api).',
};
const appImports = {
  group: ['**/apps/**', '../../*/src/**'],
  message: 'Apps never import each other, and libs never import apps.',
};

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'docs/.vitepress/dist/**',
      'docs/.vitepress/cache/**',
      'coverage/**',
      'bench/results/**',
      '.data/**',
      '.quota-ledger/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      'no-restricted-imports': ['error', { patterns: [deepLibImports] }],
    },
  },
  {
    // Nest injects by the runtime class, so a type-only import of a provider breaks DI.
    files: ['apps/**/*.ts', 'libs/ledger/**/*.ts'],
    rules: { '@typescript-eslint/consistent-type-imports': 'off' },
  },
  {
    files: ['libs/domain/**/*.ts'],
    ignores: ['libs/domain/**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: frameworkAndIo, message: 'libs/domain is pure: no framework, no I/O. Pass data in.' },
            { group: ['@quota/*'], message: 'libs/domain imports no other lib.' },
            deepLibImports,
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'libs/domain reads no environment: pass values in.' },
        { name: 'fetch', message: 'libs/domain does no I/O.' },
        { name: 'setTimeout', message: 'libs/domain has no clock.' },
        { name: 'setInterval', message: 'libs/domain has no clock.' },
        { name: 'performance', message: 'libs/domain has no clock.' },
        { name: 'crypto', message: 'libs/domain has no randomness: ids come in as arguments.' },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'libs/domain has no clock: time comes in as an argument.' },
        { object: 'Math', property: 'random', message: 'libs/domain has no randomness.' },
        { object: 'crypto', property: 'randomUUID', message: 'libs/domain has no randomness: ids come in as arguments.' },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'libs/domain has no clock: `new Date()` reads it. Pass the time in.',
        },
        { selector: "CallExpression[callee.name='Date']", message: 'libs/domain has no clock.' },
        { selector: "CallExpression[callee.name='randomUUID']", message: 'libs/domain has no randomness: ids come in as arguments.' },
      ],
    },
  },
  {
    files: ['libs/config/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['@quota/*'], message: 'libs/config imports no lib.' }, appImports] }],
    },
  },
  {
    files: ['libs/ledger/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@quota/ledger', '@quota/config', '@quota/inventory', '@quota/jobs', '@quota/ops'],
              message: 'libs/ledger may import only @quota/domain and @quota/api.',
            },
            // The data source runs the migrations (database/data-source.ts), so it takes their list
            // from migrations/index.ts; a migration's own file is a frozen step of the schema's
            // history, not code the ledger may build on.
            {
              regex: '(^|/)migrations/(?!index\\.js$)',
              message: 'libs/ledger may import of migrations/ only migrations/index.js, the list the data source runs.',
            },
            deepLibImports,
            appImports,
          ],
        },
      ],
    },
  },
  {
    files: ['libs/inventory/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@quota/ledger', '@quota/config', '@quota/inventory'], message: 'libs/inventory may import only @quota/domain.' },
            deepLibImports,
            appImports,
          ],
        },
      ],
    },
  },
  {
    files: ['libs/jobs/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [{ group: ['@quota/*'], message: 'libs/jobs imports no lib: it names the queues and how to reach them.' }, appImports],
        },
      ],
    },
  },
  {
    // The HTTP contract: types and the status reasons, which the ledger's views, the controllers,
    // quotactl and the dashboard share; it imports nothing, so each of them may import it.
    files: ['libs/api/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!\\./[a-z-]+\\.js$)',
              message: 'libs/api imports nothing but its own files: it is the HTTP contract, shared by the server and its clients.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['libs/ops/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@quota/*'], message: 'libs/ops imports no lib: logging, the ops endpoint and shutdown for every process.' },
            appImports,
          ],
        },
      ],
    },
  },
  {
    files: ['apps/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [deepLibImports, { group: ['**/apps/**', '../../../*/src/**'], message: 'Apps never import each other.' }] },
      ],
    },
  },
);
