import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '.crm-upsert/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': 'off',
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['**/adapters/**'], message: 'src/ never imports adapters/ (DESIGN.md layout).' },
          { group: ['@hubspot/*', 'jsforce', 'jsforce/*'], message: 'vendor SDKs are imported only by their adapter subpath.' },
        ],
      }],
    },
  },
  {
    // The engine is a pipeline of small named stages: each function fits on a screen.
    files: ['src/engine/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // schemas/ is the bottom layer: nothing of ours below it.
    files: ['schemas/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/src/**', '**/adapters/**'], message: 'schemas/ imports nothing from src/ or adapters/ (DESIGN.md layout).' }] }],
    },
  },
);
