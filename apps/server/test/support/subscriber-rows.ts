// A subscriber row written straight into the database, for tests that need
// many subscribers or a schema of an earlier migration (the subscribe API
// would be slower, or not there yet). Only the columns every version since
// 0002 has, plus the ones a test names; the endpoint and its "hash" are made
// from the id, and last seen / updated are the subscription time.
export interface SubscriberRowFields {
  id: string;
  subscribed_at: number;
  browser?: string | null;
  os?: string | null;
  country?: string | null;
  is_active?: 0 | 1;
  external_id?: string | null;
}

export function subscriberRow(siteId: string, fields: SubscriberRowFields) {
  const { id, subscribed_at, browser = 'Chrome', os = 'Windows', country = 'US', is_active = 1, ...rest } = fields;
  return {
    id,
    site_id: siteId,
    endpoint: `https://fcm.googleapis.com/fcm/send/${id}`,
    endpoint_hash: id,
    p256dh: 'key',
    auth: 'auth',
    browser,
    os,
    country,
    is_active,
    subscribed_at,
    last_seen_at: subscribed_at,
    updated_at: subscribed_at,
    ...rest,
  };
}
