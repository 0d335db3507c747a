// RFC 8292 VAPID: the application server identifies itself to the push
// service with an ES256 JWT in `Authorization: vapid t=<jwt>, k=<public key>`.
//
// The JWT depends only on (audience, key, subject, exp), so it is signed once
// per (push-service origin, site key) and reused until an hour before it
// expires: re-signing for every message would cost an ECDSA signature each.
import type { KeyObject } from 'node:crypto';
import crypto from 'node:crypto';
import { systemClock, type Clock } from '../platform/clock';
import { vapidPrivateKeyObject } from './vapid-keys';

/** exp = now + 12 h: RFC 8292 §2 allows at most 24 h; the margin absorbs clock skew (FCM answers 403 past 24 h). */
export const VAPID_TOKEN_LIFETIME_SECONDS = 12 * 60 * 60;
/** A cached token is replaced once it has less than this left. */
export const VAPID_RENEW_BEFORE_SECONDS = 60 * 60;

/** What a site signs with: its stored key pair (base64url) and its `sub` claim. */
export interface VapidCredentials {
  publicKey: string;
  privateKey: string;
  subject: string;
}

export class VapidSubjectError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VapidSubjectError';
  }
}

/** A host Apple (and careful push services) accept in a `sub`: a real domain, not localhost, a bare name or an IP address. */
function isPublicDomain(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost') || name.endsWith('.local') || !name.includes('.')) return false;
  // IPv4 literals ("127.0.0.1") and IPv6 literals ("[::1]") are addresses, not domains.
  return !/^[\d.]+$/.test(name) && !name.startsWith('[');
}

/**
 * Checks a configured VAPID subject (VAPID_SUBJECT; RFC 8292 §2.1: a `mailto:`
 * or `https:` URI the push service can use to reach the sender) and returns it
 * in the form sent, or the reason it is refused. Apple answers 403
 * BadJwtToken to `mailto:` at `localhost`, to a space after `mailto:` and to
 * local https hosts, so those are refused before anything is sent.
 */
export function checkVapidSubject(value: string): { subject: string } | { problem: string } {
  const text = value.trim();
  if (/^mailto:/i.test(text)) {
    const match = /^mailto:([^\s@:/]+)@([^\s@/?#]+)$/i.exec(text);
    if (!match) return { problem: 'must be mailto: followed directly by an email address, e.g. mailto:ops@example.com (no spaces)' };
    if (!isPublicDomain(match[2]!)) return { problem: `must be an address at a real domain (push services refuse "${match[2]}")` };
    return { subject: `mailto:${match[1]}@${match[2]!.toLowerCase()}` };
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: 'must be a mailto: address or an https: URL, e.g. mailto:ops@example.com' };
  }
  if (url.protocol !== 'https:') return { problem: 'must be a mailto: address or an https: URL, e.g. mailto:ops@example.com' };
  if (!isPublicDomain(url.hostname)) return { problem: `must be an https: URL at a real domain (push services refuse "${url.hostname}")` };
  return { subject: url.origin + (url.pathname === '/' ? '' : url.pathname) };
}

/**
 * The `sub` claim for a site's pushes (RFC 8292 §2.1), first usable of:
 *
 * 1. the operator's VAPID_SUBJECT (checked once at start, see config.ts);
 * 2. the site's own origin, when the site is on https at a real domain;
 * 3. `mailto:` the site owner's email, when it is at a real domain.
 *
 * Nothing usable (a site on http or on localhost, an owner at `admin@localhost`)
 * throws a VapidSubjectError that says to set VAPID_SUBJECT, instead of every
 * Safari push failing later with 403 BadJwtToken.
 */
export function vapidSubject(siteUrl: string, ownerEmail: string | undefined, configuredSubject?: string): string {
  if (configuredSubject) return configuredSubject;
  let site: URL | undefined;
  try {
    site = new URL(siteUrl);
  } catch {
    site = undefined;
  }
  if (site?.protocol === 'https:' && isPublicDomain(site.hostname)) return site.origin;
  const contact = (ownerEmail ?? '').trim();
  const match = /^[^\s@:/]+@([^\s@/]+)$/.exec(contact);
  if (!match) {
    throw new VapidSubjectError(
      'No usable VAPID contact for this site: set VAPID_SUBJECT to a mailto: address or an https: URL at a real domain (push services require one for sites that are not on https at a public domain)',
    );
  }
  if (!isPublicDomain(match[1]!)) {
    throw new VapidSubjectError(
      `The VAPID contact address "${contact}" must be at a real domain; push services reject local addresses. Set VAPID_SUBJECT to a mailto: address or an https: URL at a real domain`,
    );
  }
  return `mailto:${contact}`;
}

const JWT_HEADER = Buffer.from(JSON.stringify({ typ: 'JWT', alg: 'ES256' })).toString('base64url');

/** Signs a VAPID JWT with ES256 (RFC 7518 §3.4: the raw 64-byte r|s signature). */
export function signVapidJwt(claims: { aud: string; exp: number; sub: string }, privateKey: KeyObject): string {
  const unsigned = `${JWT_HEADER}.${Buffer.from(JSON.stringify({ aud: claims.aud, exp: claims.exp, sub: claims.sub })).toString('base64url')}`;
  const signature = crypto.sign('sha256', Buffer.from(unsigned), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return `${unsigned}.${signature.toString('base64url')}`;
}

/** The header value RFC 8292 §3 defines. */
export function vapidAuthorization(jwt: string, publicKey: string): string {
  return `vapid t=${jwt}, k=${publicKey}`;
}

export class VapidKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VapidKeyError';
  }
}

/**
 * The site's signing key, after checking that the private key belongs to the
 * public key: a mismatched pair would sign tokens every push service refuses.
 */
function vapidSigningKey(credentials: VapidCredentials): KeyObject {
  const scalar = Buffer.from(credentials.privateKey, 'base64url');
  let derived: Buffer;
  try {
    if (scalar.length !== 32) throw new Error('length');
    const ecdh = crypto.createECDH('prime256v1');
    ecdh.setPrivateKey(scalar);
    derived = ecdh.getPublicKey();
  } catch {
    throw new VapidKeyError("The site's VAPID private key is not a P-256 private key");
  }
  if (derived.toString('base64url') !== credentials.publicKey) {
    throw new VapidKeyError("The site's VAPID private key does not belong to its public key");
  }
  return vapidPrivateKeyObject(credentials.publicKey, credentials.privateKey);
}

interface SignedToken {
  authorization: string;
  /** Epoch ms after which the token is renewed. */
  renewAt: number;
}

interface SiteTokens {
  privateKey: KeyObject;
  subject: string;
  byAudience: Map<string, SignedToken>;
}

export interface VapidTokenCacheOptions {
  clock?: Clock;
  /** Sites kept; beyond this the one added first is dropped (default 10,000). */
  maxSites?: number;
}

/**
 * Authorization headers per (push-service origin, site key), signed once and
 * reused until VAPID_RENEW_BEFORE_SECONDS before they expire.
 */
export class VapidTokenCache {
  private readonly clock: Clock;
  private readonly maxSites: number;
  private readonly sites = new Map<string, SiteTokens>();
  private signatureCount = 0;

  constructor(options: VapidTokenCacheOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.maxSites = options.maxSites ?? 10_000;
  }

  /** How many JWTs this cache has signed (for tests and metrics). */
  get signatures(): number {
    return this.signatureCount;
  }

  /** `Authorization` header value for a push to `audience` (an endpoint's origin). */
  authorization(audience: string, credentials: VapidCredentials): string {
    const now = this.clock.now();
    const site = this.site(credentials);
    const cached = site.byAudience.get(audience);
    // Reused until it is due for renewal, unless the clock went back since it was signed: its expiry would then lie
    // further ahead than a push service accepts (24 h, RFC 8292 §2), and every push would be refused with 403.
    if (cached && now < cached.renewAt && cached.renewAt - now <= (VAPID_TOKEN_LIFETIME_SECONDS - VAPID_RENEW_BEFORE_SECONDS) * 1000) return cached.authorization;

    const exp = Math.floor(now / 1000) + VAPID_TOKEN_LIFETIME_SECONDS;
    const jwt = signVapidJwt({ aud: audience, exp, sub: site.subject }, site.privateKey);
    this.signatureCount++;
    const token = { authorization: vapidAuthorization(jwt, credentials.publicKey), renewAt: (exp - VAPID_RENEW_BEFORE_SECONDS) * 1000 };
    site.byAudience.set(audience, token);
    return token.authorization;
  }

  private site(credentials: VapidCredentials): SiteTokens {
    let site = this.sites.get(credentials.publicKey);
    if (site && site.subject === credentials.subject) return site;
    // New site, or its subject changed (its URL moved to https): start over.
    site = { privateKey: vapidSigningKey(credentials), subject: credentials.subject, byAudience: new Map() };
    this.sites.delete(credentials.publicKey);
    this.sites.set(credentials.publicKey, site);
    if (this.sites.size > this.maxSites) {
      const oldest = this.sites.keys().next().value;
      if (oldest !== undefined) this.sites.delete(oldest);
    }
    return site;
  }
}
