/** Why a Herald call failed; sites can branch on `code` rather than on message text. */
export type HeraldErrorCode =
  | 'unsupported'
  | 'permission-denied'
  | 'permission-dismissed'
  | 'worker-failed'
  | 'not-subscribed'
  | 'invalid-argument'
  | 'api-error';

export class HeraldError extends Error {
  readonly code: HeraldErrorCode;

  constructor(code: HeraldErrorCode, message: string) {
    super(message);
    // Set explicitly: the bundle is minified, so the class name would be mangled.
    this.name = 'HeraldError';
    this.code = code;
  }
}
