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
  /** For an `api-error`: the code Herald's answer gave (`error.code`), e.g. `unknown_vapid_key`. */
  readonly apiCode: string | undefined;

  constructor(code: HeraldErrorCode, message: string, apiCode?: string) {
    super(message);
    // Set explicitly: the bundle is minified, so the class name would be mangled.
    this.name = 'HeraldError';
    this.code = code;
    this.apiCode = apiCode;
  }
}
