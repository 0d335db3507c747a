// Which push service an endpoint belongs to, for the outcome model's
// `push_service` (docs/delivery.md, "Outcomes"), the metrics and `herald
// doctor` (docs/web-push.md, "How the big push services behave"). Five names,
// a label set Prometheus can keep: everything else (a test push service, an
// EXTRA_PUSH_ORIGINS origin, plain http, an endpoint that is not a URL) is
// `other`. The same domains are the known push-service hosts the endpoint
// policy accepts (push-endpoints.ts).
import type { PushServiceName } from '@herald/contracts';

/** The push services of the browsers docs/web-push.md lists, each by its domains (exact, or as a parent domain). */
const PUSH_SERVICE_DOMAINS: ReadonlyArray<readonly [Exclude<PushServiceName, 'other'>, readonly string[]]> = [
  ['fcm', ['fcm.googleapis.com', 'android.googleapis.com']],
  ['mozilla', ['push.services.mozilla.com']],
  ['apple', ['push.apple.com']],
  ['microsoft', ['notify.windows.com']],
];

/** The push service a host name is on (a known domain or a subdomain of one), or `other`. */
export function pushServiceOfHost(hostname: string): PushServiceName {
  for (const [service, domains] of PUSH_SERVICE_DOMAINS) {
    if (domains.some((domain) => hostname === domain || hostname.endsWith(`.${domain}`))) return service;
  }
  return 'other';
}

/**
 * The push service of an endpoint or origin URL. Only https counts: the
 * endpoint policy accepts a known push service's host over https alone, so an
 * http URL is an administrator's EXTRA_PUSH_ORIGINS test service, `other`.
 */
export function pushServiceOf(endpointOrOrigin: string): PushServiceName {
  let url: URL;
  try {
    url = new URL(endpointOrOrigin);
  } catch {
    return 'other';
  }
  // The URL parser has lower-cased the host already.
  return url.protocol === 'https:' ? pushServiceOfHost(url.hostname) : 'other';
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
