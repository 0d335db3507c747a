import { abTestPerformance, envelope } from '@herald/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { z } from 'zod';
import { apiRequest } from '../../lib/api-client';
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

/** After the pick, the notification (now sending to the rest) and its report are fetched again. */
export function usePickAbWinnerMutation() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: pickAbWinner,
    onSettled: (_result, _error, input) => void queryClient.invalidateQueries({ queryKey: notificationKey(input.id) }),
  });
}
