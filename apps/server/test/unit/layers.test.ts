import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// The import zones of eslint.config.js (ARCHITECTURE.md, "Layers") are what
// keeps delivery/ below the features: prove the rule refuses a violation,
// linting code as if it stood in an existing file of each layer.
const repoRoot = path.resolve(import.meta.dirname, '../../../..');

async function restrictedImports(file: string, code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: repoRoot });
  const [result] = await eslint.lintText(code, { filePath: path.join(repoRoot, file) });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('layer import zones', () => {
  it('refuses a feature import in delivery/, jobs/, platform/ and db/', async () => {
    for (const file of ['apps/server/src/delivery/fan-out.ts', 'apps/server/src/jobs/scheduler.ts', 'apps/server/src/platform/errors.ts', 'apps/server/src/db/database.ts']) {
      const messages = await restrictedImports(file, "export { selectAudiencePage } from '../features/segments/audience';\n");
      expect(messages, file).toHaveLength(1);
      expect(messages[0]).toMatch(/declare a port/);
    }
  }, 60_000);

  it("lets a feature use another only through that feature's entry points", async () => {
    const file = 'apps/server/src/features/rss-feeds/service.ts';
    expect(await restrictedImports(file, "export { requireOwnedSite } from '../sites/service';\n")).toEqual([]);
    expect(await restrictedImports(file, "export { createNotification } from '../notifications/create';\n")).toEqual([]);
    expect(await restrictedImports(file, "export { insertNotification } from '../notifications/repository';\n")).toHaveLength(1);
    expect(await restrictedImports(file, "export { insertNotification } from '../../features/notifications/repository';\n")).toHaveLength(1);
  }, 60_000);
});
