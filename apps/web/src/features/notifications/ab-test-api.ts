import { abTestPerformance, envelope } from '@herald/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { z } from 'zod';
import { apiRequest } from '../../lib/api-client';
import { invalidateSiteNotifications } from '../../lib/site-queries';
import { notificationKey } from './api';

// "Send this variant to the rest" (POST /notifications/{id}/ab-test/winner).

export async function pickAbWinner(input: { id: string; variantIndex: number }) {
  return (
    await apiRequest(`/notifications/${encodeURIComponent(input.id)}/ab-test/winner`, {
      method: 'POST',
      body: { variant_index: input.variantIndex },
      schema: envelope(z.object({ ab_test: abTestPerformance })),
    })
  ).ab_test;
}

/** After the pick, the notification (now sending to the rest) and its report are fetched again, and the site's lists and dashboard with them. */
export function usePickAbWinnerMutation(siteId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: pickAbWinner,
    onSettled: (_result, _error, input) => {
      void queryClient.invalidateQueries({ queryKey: notificationKey(input.id) });
      void invalidateSiteNotifications(queryClient, siteId);
    },
  });
}

/** While a test waits for its automatic decision, the page looks again this often, so the winner shows up without a reload. */
const AB_TESTING_POLL_MS = 30_000;

/** Fetches the notification (and its report) again now and then while `active`. */
export function useRefreshWhileTesting(id: string, active: boolean) {
  const queryClient = useQueryClient();
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => void queryClient.invalidateQueries({ queryKey: notificationKey(id) }), AB_TESTING_POLL_MS);
    return () => clearInterval(timer);
  }, [active, id, queryClient]);
}
