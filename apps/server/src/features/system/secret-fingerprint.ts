import type { AppContext } from '../../context';
import { secretFingerprint } from '../../platform/secrets';
import { recordSecretFingerprint } from './repository';

/** How often a running process says again which secret it uses. */
const RECORD_EVERY_MS = 5 * 60_000;
/** Fingerprints seen within this count as in use (three records missed: the process is gone). */
export const FINGERPRINT_FRESH_MS = 3 * RECORD_EVERY_MS;

/**
 * Records this process's secret fingerprint now and every few minutes, so
 * `herald doctor` can tell when processes run with different secrets.
 * Returns a function that stops it.
 */
export function keepRecordingSecretFingerprint(ctx: Pick<AppContext, 'db' | 'clock' | 'secret' | 'log'>): () => void {
  const fingerprint = secretFingerprint(ctx.secret);
  const record = () =>
    recordSecretFingerprint(ctx.db, fingerprint, ctx.clock.now()).catch((error: unknown) => ctx.log.warn({ err: error }, 'could not record the secret fingerprint'));
  void record();
  const timer = setInterval(() => void record(), RECORD_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
