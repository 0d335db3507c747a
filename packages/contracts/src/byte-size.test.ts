import { describe, expect, it } from 'vitest';
import { formatBytes } from './byte-size';

describe('formatBytes', () => {
  it('counts bytes exactly below 1 KB', () => {
    expect(formatBytes(0)).toBe('0 bytes');
    expect(formatBytes(1)).toBe('1 byte');
    expect(formatBytes(800)).toBe('800 bytes');
    expect(formatBytes(1023)).toBe('1023 bytes');
  });

  it('uses binary KB and MB with at most one decimal, none when it is 0', () => {
    expect(formatBytes(1024)).toBe('1 KB');
    expect(formatBytes(250 * 1024)).toBe('250 KB');
    expect(formatBytes(12.3 * 1024)).toBe('12.3 KB');
    expect(formatBytes(1024 * 1024)).toBe('1 MB');
    expect(formatBytes(Math.round(1.5 * 1024 * 1024))).toBe('1.5 MB');
    expect(formatBytes(1.04 * 1024 * 1024)).toBe('1 MB');
    expect(formatBytes(200 * 1024 * 1024)).toBe('200 MB');
  });
});
