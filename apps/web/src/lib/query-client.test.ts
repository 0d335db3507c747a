import { describe, expect, it } from 'vitest';
import { createQueryClient } from './query-client';

describe('query client (spec §9 data caching)', () => {
  it('treats results as fresh for 5 minutes, retries once and does not refetch on window focus', () => {
    const queries = createQueryClient().getDefaultOptions().queries;
    expect(queries).toMatchObject({ staleTime: 300_000, retry: 1, refetchOnWindowFocus: false });
  });
});
