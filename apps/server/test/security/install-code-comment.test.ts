import { Parser } from 'htmlparser2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app';

// Issue 10 item 9 (docs/security.md, "Install code"): the snippet customers
// paste into every page began with an HTML comment holding the site name, and
// a name such as `--->` ended the comment early, turning the rest of the name
// into markup on the customer's site. No user text goes into the comment now.

const HOSTILE_NAMES = [
  '--->',
  '-->',
  '--!>',
  'Shop --><script>alert(document.cookie)</script><!--',
  'Shop ---><img src=x onerror=alert(1)>',
  '</script><script>alert(1)</script>',
  '<!-- nested',
  'Shop -',
  '->',
  '>',
  '"><svg onload=alert(1)>',
];

/**
 * Where comments end by the HTML standard (§13.2.5.43 ff.): at the first
 * `-->` or `--!>` after `<!--`, or at once for `<!-->` and `<!--->`. Returns
 * the comments and the text outside them.
 */
function splitComments(html: string): { comments: string[]; outside: string } {
  const comments: string[] = [];
  let outside = '';
  let at = 0;
  for (;;) {
    const start = html.indexOf('<!--', at);
    if (start < 0) return { comments, outside: outside + html.slice(at) };
    outside += html.slice(at, start);
    const body = start + 4;
    if (html.startsWith('>', body) || html.startsWith('->', body)) {
      const end = html.indexOf('>', body) + 1;
      comments.push('');
      at = end;
      continue;
    }
    const ends = [html.indexOf('-->', body), html.indexOf('--!>', body)].filter((i) => i >= 0);
    const end = ends.length ? Math.min(...ends) : html.length;
    comments.push(html.slice(body, end));
    at = end + (html.startsWith('--!>', end) ? 4 : 3);
  }
}

/** The elements an HTML parser finds outside comments, with their attributes. */
function elementsOf(html: string): Array<{ name: string; attributes: Record<string, string> }> {
  const elements: Array<{ name: string; attributes: Record<string, string> }> = [];
  const parser = new Parser({ onopentag: (name, attributes) => elements.push({ name, attributes }) }, { decodeEntities: true });
  parser.write(html);
  parser.end();
  return elements;
}

describe('install code with hostile site names', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.createUser();
  });
  afterAll(async () => t.close());

  it.each(HOSTILE_NAMES)('keeps the snippet inert for the site name %j', async (name) => {
    const site = await t.createSite(owner.token, { name });
    expect(site.name).toBe(name.trim());
    const code = (await t.request('GET', `/api/sites/${site.id}/install-code`, { token: owner.token })).body.data;

    for (const html of [code.snippet, code.installCode]) {
      // Every comment is one of Herald's own, whole; nothing outside them but the script tag (and whitespace).
      const { comments, outside } = splitComments(html);
      for (const comment of comments) expect([' Herald web push ', ' 1. Paste before </body> on your pages ', ' 2. Save as /herald-sw.js at your site root ']).toContain(comment);
      expect(outside.replace(/<script [^>]*><\/script>/g, '').replace(/importScripts\("[^"]*"\);/, '').trim()).toBe('');
      expect(elementsOf(outside)).toEqual([
        { name: 'script', attributes: { src: 'http://herald.test/sdk/herald.js', 'data-site-id': site.id, 'data-vapid-key': site.vapid_public_key, async: '' } },
      ]);
    }
    // No user text at all: the code is the same as a plainly named site's, up to its own id and key.
    const plain = await t.createSite(owner.token, { name: 'Plain Shop' });
    const plainCode = (await t.request('GET', `/api/sites/${plain.id}/install-code`, { token: owner.token })).body.data;
    const generic = (text: string, of: { id: string; vapid_public_key: string }) => text.replaceAll(of.id, 'SITE').replaceAll(of.vapid_public_key, 'KEY');
    expect(generic(code.installCode, site)).toBe(generic(plainCode.installCode, plain));
    expect(generic(code.snippet, site)).toBe(generic(plainCode.snippet, plain));
  });
});
