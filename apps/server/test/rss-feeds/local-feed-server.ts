// A real HTTP server on 127.0.0.1 serving feeds for the poller, with
// ETag / If-None-Match (RFC 9110 §13.1.2) and a record of every request.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FeedAnswer {
  status?: number;
  body?: string | Buffer;
  contentType?: string;
  /** When set, a request carrying this value in If-None-Match gets 304. */
  etag?: string;
  /** Extra response headers (a redirect's Location). */
  headers?: Record<string, string>;
}

export interface RecordedFeedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  /** 200, 304, 500… what the server answered. */
  status: number;
}

export class LocalFeedServer {
  readonly requests: RecordedFeedRequest[] = [];
  private readonly answers = new Map<string, FeedAnswer>();

  private constructor(
    private readonly server: http.Server,
    readonly origin: string,
  ) {}

  static async start(): Promise<LocalFeedServer> {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const instance = new LocalFeedServer(server, `http://127.0.0.1:${port}`);
    server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => instance.handle(request, response));
    return instance;
  }

  url(path: string): string {
    return `${this.origin}${path}`;
  }

  /** What `path` answers from now on. */
  serve(path: string, answer: FeedAnswer): void {
    this.answers.set(path, answer);
  }

  requestsTo(path: string): RecordedFeedRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(request: http.IncomingMessage, response: http.ServerResponse): void {
    const path = (request.url ?? '/').split('?')[0]!;
    const answer = this.answers.get(path) ?? { status: 404, body: 'not found', contentType: 'text/plain' };
    const headers: Record<string, string> = { 'content-type': answer.contentType ?? 'application/rss+xml; charset=utf-8' };
    if (answer.etag) headers.etag = answer.etag;
    Object.assign(headers, answer.headers);
    if (answer.etag && request.headers['if-none-match'] === answer.etag) {
      this.requests.push({ path, headers: request.headers, status: 304 });
      response.writeHead(304, { etag: answer.etag });
      response.end();
      return;
    }
    const status = answer.status ?? 200;
    this.requests.push({ path, headers: request.headers, status });
    response.writeHead(status, headers);
    response.end(answer.body ?? '');
  }
}

export interface TestItem {
  guid?: string;
  title?: string;
  link?: string;
  description?: string;
  pubDate?: Date;
  image?: string;
}

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function rssItemXml(item: TestItem): string {
  return [
    '<item>',
    item.guid !== undefined ? `<guid isPermaLink="false">${escapeXml(item.guid)}</guid>` : '',
    item.title !== undefined ? `<title>${escapeXml(item.title)}</title>` : '',
    item.link !== undefined ? `<link>${escapeXml(item.link)}</link>` : '',
    item.description !== undefined ? `<description>${escapeXml(item.description)}</description>` : '',
    item.pubDate ? `<pubDate>${item.pubDate.toUTCString()}</pubDate>` : '',
    item.image ? `<media:content url="${escapeXml(item.image)}" medium="image" width="1200" height="628"/>` : '',
    '</item>',
  ].join('');
}

/** An RSS 2.0 document listing `items` in the given order. */
export function rssDocument(items: TestItem[], channel: { title?: string; link?: string } = {}): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel>' +
    `<title>${escapeXml(channel.title ?? 'Test Blog')}</title><link>${escapeXml(channel.link ?? 'https://blog.example/')}</link><description>Posts</description>` +
    items.map(rssItemXml).join('') +
    '</channel></rss>'
  );
}
