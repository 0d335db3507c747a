import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// A merge left half-done once shipped both sides of a table in docs/: no
// tracked text file may hold a conflict marker line.
const ROOT = path.resolve(import.meta.dirname, '../../../..');
const TEXT = /\.(md|ts|tsx|mjs|js|json|jsonc|yml|yaml|css|html|service|conf)$/;

describe('the repository', () => {
  it('has no merge-conflict markers in tracked text files', () => {
    const files = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter((file) => TEXT.test(file));
    expect(files.length).toBeGreaterThan(100);
    const marked = files.filter((file) => {
      const full = path.join(ROOT, file);
      return fs.existsSync(full) && /^(<{7}|>{7}) /m.test(fs.readFileSync(full, 'utf8'));
    });
    expect(marked).toEqual([]);
  });
});
