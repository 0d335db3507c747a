// Which push service an endpoint belongs to, for metrics and `herald doctor`
// (docs/web-push.md, "Push services"). Five names, a label set Prometheus can
// keep: everything else (a test push service, an EXTRA_PUSH_ORIGINS origin,
// an endpoint that is not a URL) is `other`.

export type PushServiceName = 'fcm' | 'mozilla' | 'apple' | 'microsoft' | 'other';

const SERVICE_DOMAINS: ReadonlyArray<readonly [PushServiceName, readonly string[]]> = [
  ['fcm', ['fcm.googleapis.com', 'android.googleapis.com']],
  ['mozilla', ['push.services.mozilla.com']],
  ['apple', ['push.apple.com']],
  ['microsoft', ['notify.windows.com']],
];

export function pushServiceOf(endpoint: string): PushServiceName {
  let hostname: string;
  try {
    const url = new URL(endpoint);
    if (url.protocol !== 'https:') return 'other';
    hostname = url.hostname;
  } catch {
    return 'other';
  }
  for (const [name, domains] of SERVICE_DOMAINS) {
    if (domains.some((domain) => hostname === domain || hostname.endsWith(`.${domain}`))) return name;
  }
  return 'other';
}
export interface PushServiceHost {
  service: PushServiceName;
  host: string;
  port: number;
}

/**
 * One host per push service that `herald doctor` connects to (DNS, TCP 443,
 * TLS): the hosts browsers' endpoints point at today (docs/web-push.md).
 */
export const PUSH_SERVICE_HOSTS: readonly PushServiceHost[] = [
  { service: 'fcm', host: 'fcm.googleapis.com', port: 443 },
  { service: 'mozilla', host: 'updates.push.services.mozilla.com', port: 443 },
  { service: 'apple', host: 'web.push.apple.com', port: 443 },
  { service: 'microsoft', host: 'wns2-par02p.notify.windows.com', port: 443 },
];
