// Debian's Firefox ESR, headless, with its push client pointed at the test
// push service's WebSocket face (docs/real-browser-push.md), driven
// over WebDriver BiDi with puppeteer-core. A fresh profile every launch; the
// browser runs in its own process group, which close() ends together with
// Firefox's crash helper (a separate session, so the group kill misses it).
//
// Notifications: with alerts.useSystemBackend false Firefox shows each one in
// its own alert window (chrome://global/content/alerts/alert.xhtml). Started
// with `systemAccess`, WebDriver BiDi can reach that chrome window, so a test
// reads what the visitor would see and clicks it like a visitor would.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';

export const FIREFOX_PATH = process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr';

export type FirefoxPreferences = Record<string, string | number | boolean>;

/** What makes Firefox's push client talk to a local push service and show notifications headless. */
export function pushPreferences(pushServerUrl: string): FirefoxPreferences {
  return {
    'dom.push.enabled': true,
    'dom.push.connection.enabled': true,
    'dom.push.serverURL': pushServerUrl,
    // Only wss:// is accepted otherwise; the test service speaks ws:// on 127.0.0.1.
    'dom.push.testing.allowInsecureServerURL': true,
    'dom.serviceWorkers.enabled': true,
    'dom.serviceWorkers.testing.enabled': true,
    // Notification permission granted without a prompt (a headless doorhanger cannot be answered).
    'permissions.default.desktop-notification': 1,
    // Headless has no system notification daemon: without this showNotification() rejects.
    'alerts.useSystemBackend': false,
    // The machine is offline: Firefox must not switch itself to offline mode and drop the push connection.
    'network.manage-offline-status': false,
    'network.connectivity-service.enabled': false,
    'network.captive-portal-service.enabled': false,
  };
}

/** Keeps a fresh profile quiet on a machine without internet (no first-run pages, updates, telemetry, remote settings). */
const QUIET_PREFERENCES: FirefoxPreferences = {
  'app.normandy.enabled': false,
  'app.normandy.api_url': '',
  'app.update.disabledForTesting': true,
  'app.update.checkInstallTime': false,
  'browser.shell.checkDefaultBrowser': false,
  'browser.startup.homepage_override.mstone': 'ignore',
  'browser.startup.page': 0,
  'browser.newtabpage.enabled': false,
  'browser.safebrowsing.downloads.enabled': false,
  'browser.safebrowsing.malware.enabled': false,
  'browser.safebrowsing.phishing.enabled': false,
  'browser.sessionstore.resume_from_crash': false,
  'browser.warnOnQuit': false,
  'datareporting.policy.dataSubmissionEnabled': false,
  'datareporting.healthreport.uploadEnabled': false,
  'toolkit.telemetry.reportingpolicy.firstRun': false,
  'extensions.update.enabled': false,
  'extensions.getAddons.cache.enabled': false,
  'services.settings.server': 'data:,#remote-settings-dummy/v1',
  'messaging-system.rsexperimentloader.enabled': false,
  'toolkit.startup.max_resumed_crashes': -1,
};

export interface FirefoxProcess {
  pid: number;
  profileDir: string;
  /** ws://127.0.0.1:<port> of WebDriver BiDi. */
  bidiUrl: string;
  /** Everything Firefox printed so far. */
  output(): string;
  /** Attaches puppeteer over WebDriver BiDi (once). */
  connect(): Promise<Browser>;
  close(): Promise<void>;
}

const STARTUP_TIMEOUT_MS = 30_000;

export interface FirefoxOptions {
  prefs: FirefoxPreferences;
  /** `-remote-allow-system-access`: lets BiDi reach chrome windows such as notification alerts. */
  systemAccess?: boolean;
}

export async function launchFirefox(options: FirefoxOptions): Promise<FirefoxProcess> {
  if (!fs.existsSync(FIREFOX_PATH)) throw new Error(`Firefox ESR not found at ${FIREFOX_PATH}: apt-get install firefox-esr, or set FIREFOX_PATH`);
  const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-firefox-'));
  const prefs = { ...QUIET_PREFERENCES, ...options.prefs };
  fs.writeFileSync(
    path.join(profileDir, 'user.js'),
    Object.entries(prefs)
      .map(([name, value]) => `user_pref(${JSON.stringify(name)}, ${JSON.stringify(value)});`)
      .join('\n') + '\n',
  );

  // detached: its own process group, so close() can end every content process at once.
  const child: ChildProcess = spawn(
    FIREFOX_PATH,
    [
      '--headless',
      '--no-remote',
      '--profile',
      profileDir,
      '--remote-debugging-port=0',
      ...(options.systemAccess ? ['--remote-allow-system-access'] : []),
      'about:blank',
    ],
    {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      // No crash reports from a test browser (the crash helper still starts; close() ends it).
      env: { ...process.env, MOZ_CRASHREPORTER_DISABLE: '1' },
    },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pid = child.pid!;
  let browser: Browser | undefined;

  const close = async () => {
    await browser?.disconnect().catch(() => undefined);
    const crashHelpers = crashHelpersOf(pid);
    signalGroup(pid, 'SIGTERM');
    const forced = setTimeout(() => signalGroup(pid, 'SIGKILL'), 5_000);
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    clearTimeout(forced);
    signalGroup(pid, 'SIGKILL');
    for (const helper of [...crashHelpers, ...crashHelpersOf(pid)]) signalProcess(helper, 'SIGKILL');
    fs.rmSync(profileDir, { recursive: true, force: true });
  };

  let bidiUrl: string;
  try {
    bidiUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Firefox did not start WebDriver BiDi within ${STARTUP_TIMEOUT_MS} ms:\n${output}`)), STARTUP_TIMEOUT_MS);
      const check = () => {
        const match = /WebDriver BiDi listening on (ws:\/\/\S+)/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      };
      child.stderr!.on('data', check);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`Firefox exited with ${code} before starting:\n${output}`));
      });
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(new Error(`Firefox could not be started: ${error.message}`));
      });
    });
  } catch (error) {
    await close();
    throw error;
  }

  return {
    pid,
    profileDir,
    bidiUrl,
    output: () => output,
    async connect() {
      browser ??= await withTimeout(
        puppeteer.connect({ browserWSEndpoint: `${bidiUrl}/session`, protocol: 'webDriverBiDi', defaultViewport: null, protocolTimeout: 30_000 }),
        STARTUP_TIMEOUT_MS,
        'puppeteer could not open a WebDriver BiDi session',
      );
      return browser;
    },
    close,
  };
}

async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${message} within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone already.
  }
}

function signalProcess(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Gone already.
  }
}

/**
 * Firefox starts `crashhelper <firefox pid> …` in a session of its own; it is
 * found by that first argument, so only this Firefox's helper is touched.
 */
function crashHelpersOf(firefoxPid: number): number[] {
  const helpers: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (path.basename(argv[0] ?? '') === 'crashhelper' && argv[1] === String(firefoxPid)) helpers.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return helpers;
}

/** A notification as Firefox shows it in its alert window. */
export interface FirefoxAlert {
  /** The alert window's BiDi browsing context (chrome scope). */
  context: string;
  title: string;
  text: string;
  /** "via <host:port>": the origin that showed it. */
  source: string;
  /** Whether clicking it reaches the page's service worker (notificationclick). */
  clickable: boolean;
}

const ALERT_URL = 'chrome://global/content/alerts/alert.xhtml';

interface BidiCommands {
  send(method: string, params: Record<string, unknown>): Promise<{ result: any }>;
}

/**
 * Puppeteer has no API for chrome-scope contexts; its WebDriver BiDi browser
 * exposes the raw connection (BidiBrowser.connection) for such commands.
 */
function bidiCommands(browser: Browser): BidiCommands {
  const connection = (browser as unknown as { connection?: BidiCommands }).connection;
  if (!connection || typeof connection.send !== 'function') throw new Error('puppeteer is not connected over WebDriver BiDi');
  return connection;
}

/** Runs a function in a chrome window; it returns JSON text, parsed here. */
async function callInChrome<T>(browser: Browser, context: string, functionDeclaration: string): Promise<T> {
  const { result } = await bidiCommands(browser).send('script.callFunction', {
    functionDeclaration,
    target: { context },
    awaitPromise: false,
  });
  if (result.type !== 'success') throw new Error(`script in ${context} failed: ${JSON.stringify(result.exceptionDetails)}`);
  return JSON.parse(result.result.value) as T;
}

/** The notifications Firefox shows now (needs `systemAccess`). */
export async function shownAlerts(browser: Browser): Promise<FirefoxAlert[]> {
  const { result } = await bidiCommands(browser).send('browsingContext.getTree', { 'moz:scope': 'chrome' });
  const alerts: FirefoxAlert[] = [];
  for (const { context, url } of result.contexts as Array<{ context: string; url: string }>) {
    if (url !== ALERT_URL) continue;
    const read = await callInChrome<Omit<FirefoxAlert, 'context'> | null>(
      browser,
      context,
      `() => {
        const box = document.getElementById('alertBox');
        // A clicked or closed alert stays until its fade-out ends; it is no longer on offer.
        if (!box || box.hasAttribute('clicked') || box.hasAttribute('closing')) return 'null';
        return JSON.stringify({
          title: document.getElementById('alertTitleLabel').getAttribute('value') ?? '',
          text: document.getElementById('alertTextLabel').textContent ?? '',
          source: document.getElementById('alertSourceLabel').getAttribute('value') ?? '',
          clickable: document.getElementById('alertNotification').getAttribute('clickable') === 'true',
        });
      }`,
    ).catch(() => null); // the window closed while we read it
    if (read) alerts.push({ context, ...read });
  }
  return alerts;
}

/** Waits for a shown notification with this title. */
export async function waitForAlert(browser: Browser, title: string, timeoutMs = 10_000): Promise<FirefoxAlert> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const alert = (await shownAlerts(browser)).find((candidate) => candidate.title === title);
    if (alert) return alert;
    if (Date.now() > deadline) throw new Error(`Firefox showed no notification titled "${title}" within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Clicks the notification's text as a visitor would: a mouse press and release
 * synthesised at the widget level of the alert window (what Firefox's own
 * tests do; BiDi's input.performActions refuses chrome contexts). The alert's
 * click handler then tells the service worker (notificationclick).
 */
export async function clickAlert(browser: Browser, alert: FirefoxAlert): Promise<void> {
  const clicked = await callInChrome<boolean>(
    browser,
    alert.context,
    `() => {
      const label = document.getElementById('alertTextLabel');
      const box = label.getBoundingClientRect();
      const x = box.left + box.width / 2;
      const y = box.top + box.height / 2;
      let reached = false;
      window.addEventListener('click', () => { reached = true; }, { once: true });
      window.synthesizeMouseEvent('mousedown', x, y, { button: 0, clickCount: 1 });
      window.synthesizeMouseEvent('mouseup', x, y, { button: 0, clickCount: 1 });
      return JSON.stringify(reached);
    }`,
  );
  if (!clicked) throw new Error(`the notification "${alert.title}" did not take the click`);
}
