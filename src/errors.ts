/**
 * The closed list of errors the API answers with, and the status of each. Every error body is
 * `{ "error": message, "code": one of these, "request_id": … }` (docs/api-errors.md).
 */
export const ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  rate_limited: 429,
  quota_exceeded: 429,
  internal: 500,
  unavailable: 503,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[]

export class ApiError extends Error {
  readonly status: number
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
    this.status = ERROR_STATUS[code]
  }
}

export const badRequest = (message: string) => new ApiError('bad_request', message)
export const notFound = (message: string) => new ApiError('not_found', message)
/** The key's tenant was deleted while the request ran (its key was still cached): as a revoked key. */
export const tenantGone = () => new ApiError('unauthorized', 'invalid, revoked or rotated API key')
