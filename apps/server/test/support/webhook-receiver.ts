// A webhook endpoint on 127.0.0.1 for tests. It verifies every request's
// signature with the `standardwebhooks` package (the specification's own
// reference library, independent of Herald's signing code) and records what
// arrived. Tests script its answers (500 until told otherwise…).
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

export interface ReceivedWebhook {
  id: string;
  timestamp: number;
  signature: string;
  body: string;
  payload: any;
  /** The status the receiver answered. */
  answered: number;
  /** The signature check's verdict (true: verified by standardwebhooks). */
  verified: boolean;
  verifyError?: string;
}

/**
 * Verifies one request as the specification says, with standardwebhooks: the
 * timestamp within 5 minutes of the test's clock, then the library's own
 * verify() when the timestamp is also near the real time (its window is
 * Date.now()), else its sign() compared with the header's v1 signatures (a
 * ManualClock a day ahead).
 */
function verifyRequest(secret: string, body: string, headers: Record<string, string>, nowSeconds: number): void {
  const timestamp = Number(headers['webhook-timestamp']);
  if (!/^\d+$/.test(headers['webhook-timestamp'] ?? '') || Math.abs(nowSeconds - timestamp) > 5 * 60) throw new WebhookVerificationError('timestamp outside the tolerance');
  const library = new Webhook(secret);
  if (Math.abs(Date.now() / 1000 - timestamp) <= 4 * 60) {
    library.verify(body, headers);
    return;
  }
  const expected = Buffer.from(library.sign(headers['webhook-id']!, new Date(timestamp * 1000), body));
  const matches = (headers['webhook-signature'] ?? '').split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError('No matching signature found');
}

export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  /** Answers in order; the last one repeats. */
  private answers: number[] = [200];
  private secret: string | undefined;

  private constructor(
    private readonly server: http.Server,
    private readonly nowSeconds: () => number,
  ) {}

  static async start(nowMs: () => number = Date.now): Promise<WebhookReceiver> {
    const server = http.createServer();
    const receiver = new WebhookReceiver(server, () => Math.floor(nowMs() / 1000));
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => receiver.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks/herald`;
  }

  /** The secret the webhook was created with: every request is verified with it. */
  useSecret(secret: string): void {
    this.secret = secret;
  }

  answer(...statuses: number[]): void {
    this.answers = statuses;
  }

  of(type: string): ReceivedWebhook[] {
    return this.received.filter((r) => r.payload?.type === type);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = { 'webhook-id': String(req.headers['webhook-id'] ?? ''), 'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''), 'webhook-signature': String(req.headers['webhook-signature'] ?? '') };
      let verified = false;
      let verifyError: string | undefined;
      try {
        if (!this.secret) throw new Error('no secret given to the receiver');
        verifyRequest(this.secret, body, headers, this.nowSeconds());
        verified = true;
      } catch (error) {
        verifyError = error instanceof Error ? error.message : String(error);
      }
      const answered = verified ? (this.answers.length > 1 ? this.answers.shift()! : this.answers[0]!) : 401;
      let payload: any;
      try {
        payload = JSON.parse(body);
      } catch {
        payload = undefined;
      }
      this.received.push({ id: headers['webhook-id'], timestamp: Number(headers['webhook-timestamp']), signature: headers['webhook-signature'], body, payload, answered, verified, ...(verifyError ? { verifyError } : {}) });
      res.writeHead(answered, { 'content-type': 'text/plain' }).end(verified ? 'ok' : `bad signature: ${verifyError}`);
    });
  }
}
