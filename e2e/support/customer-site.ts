// A site owner's website on http://127.0.0.1:<port> (a secure context, so the
// Push API is available), with Herald installed exactly as the install code
// says: the snippet pasted just before </body> and the service-worker file
// saved at the site root. The page has its own "Get notifications" button that
// calls herald.subscribe(), as the install code's next steps suggest.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** The parts of GET /api/sites/{id}/install-code a site owner copies. */
export interface InstallCode {
  snippet: string;
  serviceWorker: { fileName: string; content: string };
}

export interface CustomerSite {
  /** http://127.0.0.1:<port> — the site URL to register in Herald. */
  origin: string;
  /** Pastes the snippet and saves the worker file; before this the pages have no Herald. */
  install(code: InstallCode): void;
  /** Paths requested so far, in order. */
  requests: string[];
  close(): Promise<void>;
}

function page(title: string, body: string, snippet: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${title}</title></head>
<body>
${body}
${snippet}
</body>
</html>
`;
}

// The site's own code: a button that asks for notifications once Herald is ready.
// herald.subscribe() runs inside the click, as the SDK requires for the permission request.
const SHOP_BODY = `<h1>Pebble &amp; Pine</h1>
<p>Handmade homeware.</p>
<button id="subscribe" type="button" disabled>Get notifications</button>
<output id="status">waiting for Herald</output>
<script>
  const button = document.getElementById('subscribe');
  const status = document.getElementById('status');
  function ready() { button.disabled = false; status.textContent = 'ready'; }
  if (window.herald) ready(); else window.addEventListener('herald:ready', ready);
  button.addEventListener('click', () => {
    status.textContent = 'subscribing';
    window.herald.subscribe().then(
      (result) => { status.textContent = 'subscribed ' + result.id; },
      (error) => { status.textContent = 'failed ' + (error.code || error.name) + ': ' + error.message; },
    );
  });
</script>`;

export async function startCustomerSite(): Promise<CustomerSite> {
  let installed: InstallCode | undefined;
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    requests.push(url.pathname);
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': `${type}; charset=utf-8`, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (url.pathname === '/' || url.pathname === '/index.html') return send(200, 'text/html', page('Pebble & Pine', SHOP_BODY, installed?.snippet ?? ''));
    if (url.pathname === '/sale') return send(200, 'text/html', page('Sale — Pebble & Pine', '<h1>Summer sale</h1>', installed?.snippet ?? ''));
    if (installed && url.pathname === `/${installed.serviceWorker.fileName}`) return send(200, 'text/javascript', installed.serviceWorker.content);
    if (url.pathname === '/favicon.ico') {
      res.writeHead(204);
      return res.end();
    }
    send(404, 'text/plain', 'Not found');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    requests,
    install(code) {
      installed = code;
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
