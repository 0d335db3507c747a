import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

// One runner, several projects:
//   unit    pure modules (contracts, SDK)
//   server  the API through HTTP against a real SQLite file, or a throwaway
//           PostgreSQL cluster when HERALD_TEST_DB=postgres
//   web     React components with Testing Library (jsdom)
//   redis   the BullMQ queue adapter against a real redis-server
//   e2e     Playwright journeys through the built product in Debian's Chromium
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['packages/*/src/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'server',
          include: ['apps/server/src/**/*.test.ts', 'apps/server/test/**/*.test.ts'],
          exclude: ['apps/server/test/redis/**', 'apps/server/test/scale/**', '**/node_modules/**'],
          environment: 'node',
          globalSetup: ['apps/server/test/support/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        plugins: [react()],
        test: {
          name: 'web',
          include: ['apps/web/src/**/*.test.{ts,tsx}'],
          environment: 'jsdom',
          setupFiles: ['apps/web/src/test/setup.ts'],
          // Forms typed key by key with user-event are slow on a busy 2-core machine.
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'redis',
          include: ['apps/server/test/redis/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['apps/server/test/support/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['e2e/**/*.test.ts'],
          environment: 'node',
          testTimeout: 180_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
