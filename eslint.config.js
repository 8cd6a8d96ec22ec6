import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** A function whose first parameter is a writing context (platform/context.ts). */
const WRITES_IN_TX =
  ':matches(FunctionDeclaration, ArrowFunctionExpression, FunctionExpression)[params.0.typeAnnotation.typeAnnotation.typeName.name=/^(Ctx|TxCtx)$/]';

export default tseslint.config(
  { ignores: ['node_modules/', '.kosh/', 'test-output/', 'coverage/', 'dist/', 'clients/typescript/src/schema.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        URL: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'Use the injected clock (ctx.clock.now()) instead of new Date().',
        },
      ],
    },
  },
  {
    // A server function with more than 25 paths is split into well-named steps (issue #27).
    files: ['src/**/*.ts'],
    rules: {
      complexity: ['error', 25],
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'Use the injected clock (ctx.clock.now()) instead of new Date().',
        },
        // Inside a transaction a swallowed database error leaves it aborted (PostgreSQL refuses every
        // later statement) or half-written: rethrow what is not a known refusal (issue #27, item 5).
        {
          selector: "CallExpression[callee.property.name='execute'][callee.object.callee.property.name='transaction'] CatchClause:not(:has(ThrowStatement))",
          message: 'A catch inside a transaction must rethrow what it does not handle (a swallowed database error leaves the transaction aborted).',
        },
        {
          selector:
            "CallExpression[callee.property.name='execute'][callee.object.callee.property.name='transaction'] CallExpression[callee.property.name='catch']:not(:has(ThrowStatement))",
          message: 'A .catch inside a transaction must rethrow what it does not handle (a swallowed database error leaves the transaction aborted).',
        },
        // The same inside a function that takes a writing context (its first parameter a Ctx/TxCtx).
        {
          selector: `${WRITES_IN_TX} CatchClause:not(:has(ThrowStatement))`,
          message: 'A catch in a function that writes in a transaction must rethrow what it does not handle.',
        },
        {
          selector: `${WRITES_IN_TX} CallExpression[callee.property.name='catch']:not(:has(ThrowStatement))`,
          message: 'A .catch in a function that writes in a transaction must rethrow what it does not handle.',
        },
      ],
    },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
  {
    files: ['test/**', 'bench/**', '**/*.test.ts', 'src/cli/**', 'src/platform/clock.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
);
