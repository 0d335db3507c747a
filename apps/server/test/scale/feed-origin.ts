// A blog on 127.0.0.1 whose RSS feed Herald polls, with the time of every
// fetch (to show two schedulers poll a feed once per interval).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { rssDocument, type TestItem } from '../rss-feeds/local-feed-server';

export class FeedOrigin {
  /** When each fetch of the feed arrived (epoch ms). */
  readonly fetches: number[] = [];
  private items: TestItem[] = [];

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(items: TestItem[]): Promise<FeedOrigin> {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const origin = new FeedOrigin(server, `http://127.0.0.1:${port}/feed.xml`);
    origin.items = items;
    server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
      if (request.url !== '/feed.xml') {
        response.writeHead(404).end();
        return;
      }
      origin.fetches.push(Date.now());
      response.writeHead(200, { 'content-type': 'application/rss+xml; charset=utf-8' });
      response.end(rssDocument(origin.items, { title: 'Scale Blog', link: 'https://blog.example/' }));
    });
    return origin;
  }

  /** Publishes a post: it is listed first from the next fetch on. */
  publish(item: TestItem): void {
    this.items = [item, ...this.items];
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
