import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseNginx, type NginxDirective as Directive } from '../support/nginx-config';

// The deployment files a self-hoster copies (deploy/): nginx cannot run on the
// machine these tests run on, so the files are parsed and their security
// settings checked (docs/security.md, "Transport" and "Secrets on disk").

const deployDir = path.resolve(import.meta.dirname, '..', '..', '..', '..', 'deploy');

const header = (d: Directive) => d.name === 'add_header' && d.args[0]?.toLowerCase() === 'strict-transport-security';

/**
 * The Strict-Transport-Security values each location of a server answers
 * with. nginx inherits add_header from the server level only into locations
 * that have no add_header of their own.
 */
function hstsPerLocation(server: Directive[]): Array<{ location: string; values: string[] }> {
  const serverLevel = server.filter(header).map((d) => d.args.slice(1).join(' '));
  const locations = server.filter((d) => d.name === 'location');
  const result = [{ location: '(server)', values: serverLevel }];
  for (const location of locations) {
    const own = location.block!.filter((d) => d.name === 'add_header');
    const values = own.length ? own.filter(header).map((d) => d.args.slice(1).join(' ')) : serverLevel;
    result.push({ location: location.args.join(' '), values });
  }
  return result;
}

describe('deploy/nginx/herald.conf', () => {
  const config = parseNginx(fs.readFileSync(path.join(deployDir, 'nginx', 'herald.conf'), 'utf8'));
  const servers = config.filter((d) => d.name === 'server').map((d) => d.block!);
  const listensOn = (server: Directive[], port: string) => server.some((d) => d.name === 'listen' && d.args.some((a) => a === port || a.endsWith(`:${port}`)));

  it('sends HSTS for a year from the TLS server, on every location and on error answers', () => {
    const tls = servers.filter((s) => listensOn(s, '443'));
    expect(tls).toHaveLength(1);
    const perLocation = hstsPerLocation(tls[0]!);
    expect(perLocation.length).toBeGreaterThan(1);
    for (const { location, values } of perLocation) {
      expect(values, location).toEqual(['max-age=31536000 always']);
    }
  });

  it('does not send HSTS from the port-80 server, which only redirects to HTTPS (RFC 6797 §7.2)', () => {
    const plain = servers.filter((s) => listensOn(s, '80'));
    expect(plain).toHaveLength(1);
    const everything = (directives: Directive[]): Directive[] => directives.flatMap((d) => [d, ...everything(d.block ?? [])]);
    expect(everything(plain[0]!).filter(header)).toEqual([]);
    const redirect = plain[0]!.find((d) => d.name === 'location' && d.args[0] === '/');
    expect(redirect?.block).toEqual([{ name: 'return', args: ['301', 'https://$host$request_uri'] }]);
  });

  it('the parser reads what nginx reads: comments, quotes and nesting', () => {
    const parsed = parseNginx('server { # add_header Strict-Transport-Security "x";\n add_header X-A "a b;c" always; location / { return 204; } }');
    expect(parsed).toEqual([
      {
        name: 'server',
        args: [],
        block: [
          { name: 'add_header', args: ['X-A', 'a b;c', 'always'] },
          { name: 'location', args: ['/'], block: [{ name: 'return', args: ['204'] }] },
        ],
      },
    ]);
    expect(() => parseNginx('server { listen 80;')).toThrow('unclosed');
  });
});

describe('deploy/systemd units', () => {
  const units = fs.readdirSync(path.join(deployDir, 'systemd')).filter((f) => f.endsWith('.service'));

  it('every Herald process keeps its state folder 0700 and creates files 0600', () => {
    expect(units.sort()).toEqual(['herald-scheduler.service', 'herald-serve.service', 'herald-worker@.service']);
    for (const unit of units) {
      const lines = fs.readFileSync(path.join(deployDir, 'systemd', unit), 'utf8').split('\n').map((l) => l.trim());
      expect(lines, unit).toContain('StateDirectory=herald');
      expect(lines, unit).toContain('StateDirectoryMode=0700');
      expect(lines, unit).toContain('UMask=0077');
    }
  });
});
