import createFetchClient, { type Client } from 'openapi-fetch'
import { type RetryOptions, retryAfterMs, retryingFetch } from './retry.js'
import type { components, operations, paths } from './schema.js'

export type { RetryOptions } from './retry.js'
export { retryAfterMs } from './retry.js'
export type { components, operations, paths }

type Schemas = components['schemas']
export type ScoreRequest = Schemas['ScoreRequest']
export type ScoreResponse = Schemas['ScoreResponse']
export type BatchScoreResponse = Schemas['BatchScoreResponse']
export type Verdict = Schemas['Verdict']
export type ReasonCode = Schemas['ReasonCode']
/** A built-in ReasonCode, or `rule:<id>` for one of your rules. */
export type Reason = Schemas['Reason']
export type Check = Schemas['Check']
export type DeviceProfile = Schemas['DeviceProfile']
export type Event = Schemas['Event']
export type EventDetail = Schemas['EventDetail']
export type EventsPage = Schemas['EventsPage']
export type EventsQuery = NonNullable<operations['listEvents']['parameters']['query']>
export type LabelRequest = Schemas['LabelRequest']
export type LabelResult = Schemas['LabelResult']
export type LabelKind = Schemas['LabelKind']
export type Label = Schemas['Label']
export type LabelsPage = Schemas['LabelsPage']
export type ListEntry = Schemas['ListEntry']
export type ListEntryInput = Schemas['ListEntryInput']
export type Usage = Schemas['Usage']
export type ErrorBody = Schemas['ErrorBody']
export type ErrorCode = ErrorBody['code']

/** An error answer of the API: its status, its closed `code` and the `request_id` the server logged it under. */
export class VerdictError extends Error {
  override readonly name = 'VerdictError'
  readonly status: number
  readonly code: ErrorCode
  readonly request_id: string
  /** Retry-After in ms when the server sent one (429, 503). */
  readonly retryAfterMs: number | null

  constructor(status: number, body: ErrorBody, retryAfterMs: number | null = null) {
    super(`${body.error} (${body.code}, request ${body.request_id})`)
    this.status = status
    this.code = body.code
    this.request_id = body.request_id
    this.retryAfterMs = retryAfterMs
  }
}

export interface VerdictClientOptions {
  /** The server, e.g. https://verdict.internal:3000 (no trailing /v1). */
  baseUrl: string
  /** A secret API key (sk_...), sent in x-api-key. */
  apiKey: string
  /** Retrying of 429 and 503; `false` turns it off. */
  retry?: RetryOptions | false
  /** Makes Idempotency-Key values (default crypto.randomUUID). */
  idempotencyKey?: () => string
  fetch?: (input: Request) => Promise<Response>
}

/** Per call: your own Idempotency-Key (otherwise one is made, and reused by every retry of the call). */
export interface IdempotentCall {
  idempotencyKey?: string
}

interface Answer<T> {
  data?: T
  error?: unknown
  response: Response
}

/** The data of a 2xx answer, or a VerdictError built from the error body. */
function unwrap<T>(answer: Answer<T>): T {
  const { data, error, response } = answer
  if (response.ok && data !== undefined) return data
  const body = error as Partial<ErrorBody> | undefined
  const request_id = body?.request_id ?? response.headers.get('x-request-id') ?? ''
  throw new VerdictError(
    response.status,
    {
      error: body?.error ?? `HTTP ${response.status}`,
      code: body?.code ?? (response.status >= 500 ? 'internal' : 'bad_request'),
      request_id,
    },
    retryAfterMs(response.headers.get('retry-after')),
  )
}

/**
 * The verdict API with named types. Every call throws a VerdictError on an error answer; 429 and 503
 * are retried with backoff (Retry-After honoured) first, and the calls that take an Idempotency-Key
 * (score, batchScore, label) send one that every retry repeats, so a retry never counts twice.
 */
export function createVerdictClient(options: VerdictClientOptions) {
  const base = options.fetch ?? ((input: Request) => globalThis.fetch(input))
  const raw: Client<paths> = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { 'x-api-key': options.apiKey },
    fetch: options.retry === false ? base : retryingFetch(base, options.retry),
  })
  const newKey = options.idempotencyKey ?? (() => globalThis.crypto.randomUUID())
  const idem = (call?: IdempotentCall) => ({ 'idempotency-key': call?.idempotencyKey ?? newKey() })

  return {
    /** The underlying openapi-fetch client, for every operation of the document. */
    raw,
    /** Scores one event: score 0-100, verdict, reason codes and evidence. */
    score: async (event: ScoreRequest, call?: IdempotentCall): Promise<ScoreResponse> =>
      unwrap(await raw.POST('/v1/score', { body: event, params: { header: idem(call) } })),
    /** Scores up to 1000 events in order; one result per event. */
    batchScore: async (events: ScoreRequest[], call?: IdempotentCall): Promise<ScoreResponse[]> =>
      unwrap(await raw.POST('/v1/batch/score', { body: { rows: events }, params: { header: idem(call) } }))
        .results,
    /** Reports a real outcome (fraud, chargeback or legit) of an event or a user. */
    label: async (label: LabelRequest, call?: IdempotentCall): Promise<LabelResult> =>
      unwrap(await raw.POST('/v1/label', { body: label, params: { header: idem(call) } })),
    events: {
      list: async (query: EventsQuery = {}): Promise<EventsPage> =>
        unwrap(await raw.GET('/v1/events', { params: { query } })),
      get: async (id: string): Promise<EventDetail> =>
        unwrap(await raw.GET('/v1/events/{id}', { params: { path: { id } } })),
    },
    labels: {
      list: async (query: NonNullable<operations['listLabels']['parameters']['query']> = {}) =>
        unwrap(await raw.GET('/v1/labels', { params: { query } })),
      withdraw: async (id: string) =>
        unwrap(await raw.DELETE('/v1/labels/{id}', { params: { path: { id } } })),
    },
    lists: {
      add: async (entry: ListEntryInput): Promise<ListEntry> =>
        unwrap(await raw.POST('/v1/lists', { body: entry })),
      list: async (query: NonNullable<operations['listListEntries']['parameters']['query']> = {}) =>
        unwrap(await raw.GET('/v1/lists', { params: { query } })),
      remove: async (id: string) => unwrap(await raw.DELETE('/v1/lists/{id}', { params: { path: { id } } })),
    },
    usage: async (): Promise<Usage> => unwrap(await raw.GET('/v1/usage')),
  }
}

export type VerdictClient = ReturnType<typeof createVerdictClient>
