// A throwaway certificate authority and a server certificate for 127.0.0.1,
// made with the openssl CLI, so HTTPS tests give clients a CA to trust instead
// of switching certificate checks off.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface TestCertificate {
  /** PEM of the CA that signed `cert`: what a client trusts (undici `connect.ca`, NODE_EXTRA_CA_CERTS). */
  ca: string;
  /** PEM server certificate, subjectAltName IP:127.0.0.1 and DNS:localhost. */
  cert: string;
  /** PEM private key of `cert`. */
  key: string;
  /** The same three as files, for other processes (NODE_EXTRA_CA_CERTS, Firefox's certutil). */
  caFile: string;
  certFile: string;
  keyFile: string;
}

let cached: TestCertificate | undefined;

/** Creates (once per process) a CA and a certificate for 127.0.0.1 valid for two days. */
export function createTestCertificate(): TestCertificate {
  if (cached) return cached;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-test-tls-'));
  const file = (name: string) => path.join(dir, name);
  const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

  openssl(['req', '-x509', ...ecKey, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=Herald test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  openssl(['req', ...ecKey, '-keyout', file('key.pem'), '-out', file('server.csr'), '-subj', '/CN=127.0.0.1']);
  fs.writeFileSync(
    file('server.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n',
  );
  openssl(['x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial',
    '-out', file('cert.pem'), '-days', '2', '-extfile', file('server.ext')]);

  cached = {
    ca: fs.readFileSync(file('ca.pem'), 'utf8'),
    cert: fs.readFileSync(file('cert.pem'), 'utf8'),
    key: fs.readFileSync(file('key.pem'), 'utf8'),
    caFile: file('ca.pem'),
    certFile: file('cert.pem'),
    keyFile: file('key.pem'),
  };
  return cached;
}
