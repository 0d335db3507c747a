// Flat ESLint config: typescript-eslint recommended everywhere, type-aware
// promise rules on the server (a forgotten await there loses sends), and the
// React hooks rules on the dashboard.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';

// The server's layers (ARCHITECTURE.md, "Layers"). delivery/, jobs/, platform/
// and db/ sit below the features and never import them; what the engine needs
// from a feature is declared as a port (delivery/ports.ts) and wired at the
// composition root (runtime.ts, engine.ts). A feature uses another only through
// that feature's published entry points, listed here.
const FEATURE_ENTRY_POINTS = [
  'sites/service', // requireSiteRole: membership and role checks
  'segments/service', // requireSegmentOfSite: a target must be the site's own segment
  'segments/segment-uses', // SegmentUse: what a feature's segment-use finder returns
  'subscribers/hooks', // the subscriber-created and subscriber-removed hook contracts
  'subscribers/push-subscription', // the rules a browser subscription is checked by (public subscribe, import)
  'tracking/hooks', // the notification-clicked hook contract
  'site-events/hooks', // the site-event hook contract
  'analytics/site-counters', // the hourly rollup and active count every writer adds to
  'notifications/create', // the one way a notification row is created
  'api-keys/service', // authenticates a site API key (v1 server-to-server routes)
  'audit-log/record', // recordAudit: the one way a change is written to a site's audit log
  'auth/accounts', // creating an account and its session: setup, sign-up, accepted invitations
  'retention/compacted', // what delivery-row figures (A/B variants, the CSV report) add for rows retention removed
];
const escapeRegex = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const otherFeatureImport = `^\\.\\./(?!(?:${FEATURE_ENTRY_POINTS.map(escapeRegex).join('|')})$)[a-z-]+/`;

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'data/**', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    files: ['apps/server/src/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  {
    files: ['apps/server/src/{delivery,jobs,platform,db}/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/features', '**/features/**'], message: 'delivery/, jobs/, platform/ and db/ are below the features: declare a port (delivery/ports.ts) and wire it in runtime.ts or engine.ts.' }] },
      ],
    },
  },
  {
    files: ['apps/server/src/features/*/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^(\\.\\./){2,}features/', message: 'A feature reaches another as ../<feature>/<entry point>.' }, { regex: otherFeatureImport, message: `A feature uses another only through its entry points (${FEATURE_ENTRY_POINTS.join(', ')}); see eslint.config.js and ARCHITECTURE.md.` }] },
      ],
    },
  },
  {
    files: ['apps/web/src/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
    },
  },
  {
    // Tests read loosely typed JSON response bodies.
    files: ['**/test/**/*.ts', '**/*.test.ts', '**/*.test.tsx', 'e2e/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['packages/sdk/src/**/*.ts'],
    languageOptions: { globals: { ...globals.browser, ...globals.serviceworker } },
  },
);
