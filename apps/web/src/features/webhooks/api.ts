import {
  createWebhookResponse,
  deleteWebhookResponse,
  testWebhookResponse,
  webhookDeliveriesResponse,
  webhooksResponse,
  type CreatedWebhook,
  type CreateWebhookBody,
  type Webhook,
  type WebhookAttempt,
} from '@herald/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiRequest } from '../../lib/api-client';

// Settings → Webhooks: a site's endpoints, their delivery logs, test events.

export const webhooksQueryKey = (siteId: string) => ['sites', siteId, 'webhooks'] as const;
export const webhookDeliveriesQueryKey = (webhookId: string) => ['webhooks', webhookId, 'deliveries'] as const;

export const DELIVERY_LOG_LIMIT = 50;

export async function fetchWebhooks(siteId: string): Promise<Webhook[]> {
  return (await apiRequest(`/sites/${encodeURIComponent(siteId)}/webhooks`, { schema: webhooksResponse })).webhooks;
}

export function useWebhooksQuery(siteId: string) {
  return useQuery({ queryKey: webhooksQueryKey(siteId), queryFn: () => fetchWebhooks(siteId) });
}

/** The secret stays in the caller's state only: the cache holds the listed shape, as the server lists it. */
export function useCreateWebhookMutation(siteId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: CreateWebhookBody): Promise<CreatedWebhook> =>
      (await apiRequest(`/sites/${encodeURIComponent(siteId)}/webhooks`, { method: 'POST', body, schema: createWebhookResponse })).webhook,
    onSuccess: (created) => {
      const listed: Webhook = { id: created.id, url: created.url, events: created.events, created_at: created.created_at };
      queryClient.setQueryData<Webhook[]>(webhooksQueryKey(siteId), (hooks) => (hooks ? [...hooks, listed] : hooks));
    },
  });
}

export function useDeleteWebhookMutation(siteId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (id: string) => {
      await apiRequest(`/webhooks/${encodeURIComponent(id)}`, { method: 'DELETE', schema: deleteWebhookResponse });
    },
    onSuccess: (_result, id) => {
      queryClient.setQueryData<Webhook[]>(webhooksQueryKey(siteId), (hooks) => hooks?.filter((hook) => hook.id !== id));
    },
  });
}

export function useWebhookDeliveriesQuery(webhookId: string, enabled: boolean) {
  return useQuery({
    queryKey: webhookDeliveriesQueryKey(webhookId),
    queryFn: async (): Promise<WebhookAttempt[]> =>
      (await apiRequest(`/webhooks/${encodeURIComponent(webhookId)}/deliveries?limit=${DELIVERY_LOG_LIMIT}`, { schema: webhookDeliveriesResponse })).deliveries,
    enabled,
  });
}

export function useTestWebhookMutation(webhookId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (): Promise<WebhookAttempt> => (await apiRequest(`/webhooks/${encodeURIComponent(webhookId)}/test`, { method: 'POST', schema: testWebhookResponse })).delivery,
    onSettled: () => queryClient.invalidateQueries({ queryKey: webhookDeliveriesQueryKey(webhookId) }),
  });
}
