import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * A comment that switches the complexity limit off or changes it: `eslint-disable…` naming
 * `complexity`, a blanket `eslint-disable…` (which switches every rule off, complexity with it), or
 * `/* eslint complexity: … *\/`. Past the limit a function is split into named steps (issue #27).
 */
const noComplexityOverride = {
  meta: {
    type: 'problem',
    docs: { description: 'Forbid comments that disable or reconfigure the complexity rule' },
    schema: [],
  },
  create(context) {
    return {
      Program() {
        for (const comment of context.sourceCode.getAllComments()) {
          const text = comment.value.replace(/\s--\s[\s\S]*$/, '').trim();
          const match = /^(eslint-disable(?:-next-line|-line)?|eslint)(?:\s+([\s\S]*))?$/.exec(text);
          if (!match) continue;
          const [, kind, rest = ''] = match;
          const rules = kind === 'eslint' ? rest.split(',').map((r) => r.split(':')[0].trim()) : rest.split(',').map((r) => r.trim());
          const blanket = kind !== 'eslint' && rules.every((r) => r === '');
          if (!blanket && !rules.includes('complexity')) continue;
          context.report({
            loc: comment.loc,
            message: blanket
              ? 'A blanket eslint-disable switches the complexity limit off too: name the rules it disables.'
              : 'The complexity limit (25) is not switched off or changed here: split the function into well-named steps.',
          });
        }
      },
    };
  },
};

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
    // A server function with more than 25 paths is split into well-named steps (issue #27); no
    // comment may switch the limit off (kosh/no-complexity-override).
    files: ['src/**/*.ts'],
    plugins: { kosh: { rules: { 'no-complexity-override': noComplexityOverride } } },
    rules: {
      complexity: ['error', 25],
      'kosh/no-complexity-override': 'error',
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
