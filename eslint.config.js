import js from '@eslint/js';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      'ui/.svelte-kit/**',
      'ui/build/**',
      'ui/src/lib/api/schema.d.ts',
      'coverage/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        Buffer: 'readonly',
        fetch: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  // The web UI runs in a browser: its files see the DOM's globals, and .svelte files are parsed
  // by the Svelte plugin with TypeScript inside <script lang="ts">.
  ...svelte.configs.recommended.map((config) => ({ ...config, files: config.files ?? ['ui/**/*.svelte'] })),
  {
    files: ['ui/**/*.svelte', 'ui/**/*.svelte.ts', 'ui/src/**/*.ts'],
    languageOptions: {
      globals: globals.browser,
      parserOptions: { parser: tseslint.parser, extraFileExtensions: ['.svelte'] },
    },
    rules: {
      // The UI is served at / with no base path, so links need no resolve().
      'svelte/no-navigation-without-resolve': 'off',
      // Flags every Set built inside a function, also the throw-away ones that are never reactive.
      'svelte/prefer-svelte-reactivity': 'off',
    },
  },
);
