// Type-aware ESLint (flat config). Architecture rules: libs never import apps; apps never import other apps; a lib
// is imported only through its index.ts (`@stoa/<lib>`); no entity in a lib's public API.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const folders = (dir) =>
  readdirSync(join(import.meta.dirname, dir), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
const LIBS = folders('libs');
const APPS = folders('apps');

// no-restricted-imports matches the import text (static imports and re-exports; not import() or require), so each
// lib and app gets its own list naming the others.
const PUBLIC_API =
  'only its src/index.ts is public. Import `@stoa/<lib>`; if what you need is not exported there, export it from that index.ts.';
const outsideLibImports = [
  { group: ['@stoa/*/**'], message: `Deep import into a lib: ${PUBLIC_API}` },
  { regex: '(^|/)libs/[^/]+/src(/|$)', message: `Path import into a lib: ${PUBLIC_API}` },
];
const restrictImports = (patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });
const libBoundaries = LIBS.map((lib) => ({
  files: [`libs/${lib}/**/*.ts`],
  rules: restrictImports([
    ...outsideLibImports,
    {
      regex: `^(\\.\\./)+(${LIBS.filter((l) => l !== lib).join('|')})/src(/|$)`,
      message: `Relative import into another lib: ${PUBLIC_API}`,
    },
    { group: ['**/apps/**', 'apps/*'], message: 'libs must not import apps: move what both need into a lib.' },
  ]),
}));

const appBoundaries = APPS.map((app) => ({
  files: [`apps/${app}/**/*.ts`],
  rules: restrictImports([
    ...outsideLibImports,
    {
      regex: `^(\\.\\./)+(apps/)?(${APPS.filter((a) => a !== app).join('|')})/`,
      message: 'apps must not import other apps: move what both need into a lib.',
    },
  ]),
}));

// The embedding entry (embed/) is the package's public surface above the apps: it composes each app only through
// that app's src/index.ts, the app's embeddable API.
const embedBoundaries = {
  files: ['embed/**/*.ts'],
  rules: restrictImports([
    ...outsideLibImports,
    {
      regex: '(^|/)apps/[^/]+/src/.+',
      message:
        "Deep import into an app: import the app's src/index.ts (its embeddable API) and export what you need there.",
    },
  ]),
};

// Entities stay inside their lib (STYLE: persistence only through repositories); libs/persistence is the contract.
// Recognised by file name (`*.entity.ts`, `*.entities.ts`): an entity re-exported through another module slips by.
const ENTITY_EXPORT =
  "An entity in a lib's public API: export the repository's record type (`*.types.ts`) instead; tests inside the lib import the entity from ../src.";
const noEntityExports = {
  files: ['libs/*/src/index.ts'],
  ignores: ['libs/persistence/src/index.ts'],
  rules: {
    'no-restricted-syntax': [
      'error',
      { selector: 'ExportNamedDeclaration[source.value=/\\.entit(y|ies)$/]', message: ENTITY_EXPORT },
      { selector: 'ExportAllDeclaration[source.value=/\\.entit(y|ies)$/]', message: ENTITY_EXPORT },
      { selector: 'ImportDeclaration[source.value=/\\.entit(y|ies)$/]', message: ENTITY_EXPORT },
    ],
  },
};

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'docs/api/**',
      'node_modules/**',
      'coverage/**',
      '.test-venv/**',
      'data/**',
      '**/*.mjs',
      '**/*.cjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  { files: ['**/*.ts'], rules: restrictImports(outsideLibImports) },
  ...libBoundaries,
  ...appBoundaries,
  embedBoundaries,
  noEntityExports,
  {
    // The browser pages' scripts (activity dashboard, square): plain JavaScript, no type information.
    files: ['apps/*/static/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'script',
      globals: Object.fromEntries(
        ['window', 'document', 'location', 'fetch', 'EventSource', 'URL', 'URLSearchParams', 'setTimeout'].map((g) => [
          g,
          'readonly',
        ]),
      ),
    },
  },
  // The activity dashboard is two ES modules (the page loads dashboard.js with type="module").
  { files: ['apps/activity/static/**/*.js'], languageOptions: { sourceType: 'module' } },
  {
    files: ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts', 'test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    rules: {
      'no-console': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
);
