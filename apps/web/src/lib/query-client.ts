import { QueryClient } from '@tanstack/react-query';

/** Spec §9 data caching: stale after 5 minutes, one retry, no refetch on window focus. */
export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: { staleTime: 5 * 60 * 1000, retry: 1, refetchOnWindowFocus: false },
    },
  });
}

export const queryClient = createQueryClient();
