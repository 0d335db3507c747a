// Reading a response of the outbound HTTP client (outbound-http.ts) within its
// byte cap (docs/security.md, "Outbound requests (SSRF)"): the cap holds on the
// wire and after gzip/deflate/br decoding, so a gzip bomb stops at the cap.
import { Transform, Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { formatBytes } from '@herald/contracts';
import { OutboundError } from './outbound-errors';

/** Drops a body we will not read; undici reports the abort as an error event, which is expected here. */
export function discard(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** Lower-case names; repeated headers joined with ", ". */
export function flattenHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** Decoders for Content-Encoding, applied in reverse of the order the server listed them (RFC 9110 §8.4). */
function decodersFor(contentEncoding: string | undefined, subject: string): Transform[] {
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c && c !== 'identity');
  // Browsers accept a body cut short at the end of a gzip stream; so do we.
  const lenient = { finishFlush: zlib.constants.Z_SYNC_FLUSH };
  return codings.reverse().map((coding) => {
    if (coding === 'gzip' || coding === 'x-gzip') return zlib.createGunzip(lenient);
    if (coding === 'deflate') return zlib.createInflate(lenient); // zlib-wrapped, RFC 9110 §8.4.1.2
    if (coding === 'br') return zlib.createBrotliDecompress({ finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH });
    throw new OutboundError('bad_encoding', `${subject} server used an unsupported compression (${coding})`);
  });
}

/** Reads the body through its decoders, refusing as soon as either the wire or the decoded bytes pass the cap. */
export async function readCappedBody(body: Readable, headers: Record<string, string>, maxBytes: number, subject: string, signal: AbortSignal): Promise<Buffer> {
  const tooLarge = () => new OutboundError('too_large', `${subject} is larger than ${formatBytes(maxBytes)}`);
  const decoders = decodersFor(headers['content-encoding'], subject);
  const declaredLength = Number(headers['content-length']);
  if (Number.isFinite(declaredLength) && declaredLength > maxBytes) {
    discard(body);
    throw tooLarge();
  }
  let wireBytes = 0;
  const wireCounter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      wireBytes += chunk.length;
      if (wireBytes > maxBytes) callback(tooLarge());
      else callback(null, chunk);
    },
  });
  const chunks: Buffer[] = [];
  let decodedBytes = 0;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      decodedBytes += chunk.length;
      if (decodedBytes > maxBytes) {
        callback(tooLarge());
        return;
      }
      chunks.push(chunk);
      callback();
    },
  });
  await pipeline([body, wireCounter, ...decoders, sink], { signal });
  return Buffer.concat(chunks, decodedBytes);
}
