import { UNKNOWN } from '@herald/contracts';
import { UAParser } from 'ua-parser-js';

/** Stored User-Agent headers are cut here; real ones are a few hundred characters. */
export const USER_AGENT_MAX_LENGTH = 1024;

// ua-parser-js names the mobile and embedded variants separately ("Mobile
// Chrome", "Chrome WebView", "Mobile Safari"); the dashboard and segments
// (spec §2: Browser Any/Chrome/Firefox/Safari/Edge, OS Any/Windows/macOS/
// Linux/Android/iOS) file them under the family name.
const BROWSER_FAMILIES: Array<[RegExp, string]> = [
  [/^(mobile )?chrome( headless| webview)?$|^chromium$/i, 'Chrome'],
  [/^(mobile )?firefox( focus| reality)?$/i, 'Firefox'],
  [/^(mobile )?safari$|^webkit$|^safari webview$/i, 'Safari'],
  [/^edge( webview| webview2)?$/i, 'Edge'],
  [/^opera( mobi| mini| touch| gx| coast)?$/i, 'Opera'],
];

const LINUX_DISTRIBUTIONS = new Set(
  [
    'Linux',
    'Ubuntu',
    'Kubuntu',
    'Debian',
    'Fedora',
    'Arch',
    'CentOS',
    'RedHat',
    'SUSE',
    'Gentoo',
    'Mint',
    'Manjaro',
    'Mageia',
    'Mandriva',
    'Slackware',
    'Deepin',
    'elementary OS',
    'Knoppix',
    'Linpus',
    'Linspire',
    'PCLinuxOS',
    'Raspbian',
    'Sabayon',
    'Zenwalk',
    'GNU',
  ].map((name) => name.toLowerCase()),
);

function operatingSystemName(parsed: string | undefined): string {
  if (!parsed) return UNKNOWN;
  const lower = parsed.toLowerCase();
  if (lower === 'windows' || lower === 'windows phone' || lower === 'windows mobile') return 'Windows';
  if (lower === 'macos' || lower === 'mac os') return 'macOS';
  if (lower === 'ios' || lower === 'ipados') return 'iOS';
  if (lower === 'android' || lower === 'android-x86') return 'Android';
  if (lower === 'chrome os' || lower === 'chromium os') return 'ChromeOS';
  if (LINUX_DISTRIBUTIONS.has(lower)) return 'Linux';
  return parsed;
}

function browserName(parsed: string | undefined, os: string): string {
  if (!parsed) return UNKNOWN;
  for (const [pattern, family] of BROWSER_FAMILIES) if (pattern.test(parsed)) return family;
  // Every iOS browser and home-screen web app runs on WebKit, and its pushes
  // go through Apple's service (docs/web-push.md).
  if (os === 'iOS' && /webkit/i.test(parsed)) return 'Safari';
  return parsed;
}

/**
 * User-Agent headers repeat (one per browser version and platform), and
 * parsing one was an eighth of a subscribe's time in a profile of the
 * public API: the names of the most recently seen ones are kept.
 */
const DESCRIBED_CACHE_SIZE = 2000;
const described = new Map<string, { browser: string; os: string }>();

/** Browser and OS names of a User-Agent header, "Unknown" for what cannot be identified. */
export function describeUserAgent(userAgent: string | undefined): { browser: string; os: string } {
  if (!userAgent) return { browser: UNKNOWN, os: UNKNOWN };
  const header = userAgent.slice(0, USER_AGENT_MAX_LENGTH);
  const known = described.get(header);
  if (known) return known;
  const parsed = UAParser(header);
  const os = operatingSystemName(parsed.os.name);
  const names = Object.freeze({ browser: browserName(parsed.browser.name, os), os });
  // Oldest first out: a Map keeps insertion order.
  if (described.size >= DESCRIBED_CACHE_SIZE) described.delete(described.keys().next().value!);
  described.set(header, names);
  return names;
}
