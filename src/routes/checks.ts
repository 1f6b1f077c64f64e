import { requestContext, tenantContext } from '../context.js'
import { CHECK_BODY_LIMIT, smallBodyLimit } from '../plugins/json-body.js'
import {
  CombinedBody,
  CombinedResponse,
  EmailBatch,
  EmailBatchResponse,
  EmailCheckResponse,
  EmailRow,
  IpBatch,
  IpBatchResponse,
  IpCheckResponse,
  IpRow,
  PhoneBatch,
  PhoneBatchResponse,
  PhoneCheckResponse,
  PhoneRow,
} from '../schemas/checks.js'
import { errors, NoQuery } from '../schemas/common.js'
import {
  checkBatch,
  checkCombined,
  checkOne,
  emailCheck,
  ipCheck,
  phoneCheck,
} from '../services/identifiers/identifier-checks.js'
import type { App } from './types.js'

export function registerCheckRoutes(app: App): void {
  const single = { tags: ['checks'], querystring: NoQuery }
  const batch = { tags: ['checks', 'batch'], querystring: NoQuery }

  app.post(
    '/v1/check/email',
    {
      schema: {
        operationId: 'checkEmail',
        description:
          'Metered as one unit. The address itself is never stored, only its keyed hash in the lookup history.',
        ...single,
        summary:
          'Judge one email address: syntax, aliases, disposable domain, mail server, gibberish, network reputation',
        body: EmailRow,
        response: { 200: EmailCheckResponse, ...errors(400, 401, 429, 500) },
      },
    },
    async (request) => checkOne(tenantContext(request), emailCheck, request.body),
  )
  app.post(
    '/v1/check/ip',
    {
      schema: {
        operationId: 'checkIp',
        description:
          'Metered as one unit. The answer comes from the reference data loaded in memory; nothing is fetched per request.',
        ...single,
        summary: 'Judge one IP address: hosting, proxy, VPN, Tor, private relay, geolocation, reputation',
        body: IpRow,
        response: { 200: IpCheckResponse, ...errors(400, 401, 429, 500) },
      },
    },
    async (request) => checkOne(tenantContext(request), ipCheck, request.body),
  )
  app.post(
    '/v1/check/phone',
    {
      schema: {
        operationId: 'checkPhone',
        description: 'Metered as one unit. A national-format number needs its country.',
        ...single,
        summary: 'Judge one phone number: validity, line type, VoIP, disposable lists, carrier, reputation',
        body: PhoneRow,
        response: { 200: PhoneCheckResponse, ...errors(400, 401, 429, 500) },
      },
    },
    async (request) => checkOne(tenantContext(request), phoneCheck, request.body),
  )

  app.post(
    '/v1/batch/check/email',
    {
      schema: {
        operationId: 'batchCheckEmail',
        description: 'One unit per row; the results keep the order of the rows.',
        ...batch,
        summary: 'Judge up to 1000 email addresses',
        body: EmailBatch,
        response: { 200: EmailBatchResponse, ...errors(400, 401, 429) },
      },
    },
    async (request) => checkBatch(tenantContext(request), emailCheck, request.body.rows),
  )
  app.post(
    '/v1/batch/check/ip',
    {
      schema: {
        operationId: 'batchCheckIp',
        description: 'One unit per row; the results keep the order of the rows.',
        ...batch,
        summary: 'Judge up to 1000 IP addresses',
        body: IpBatch,
        response: { 200: IpBatchResponse, ...errors(400, 401, 429) },
      },
    },
    async (request) => checkBatch(tenantContext(request), ipCheck, request.body.rows),
  )
  app.post(
    '/v1/batch/check/phone',
    {
      schema: {
        operationId: 'batchCheckPhone',
        description: 'One unit per row; the results keep the order of the rows.',
        ...batch,
        summary: 'Judge up to 1000 phone numbers',
        body: PhoneBatch,
        response: { 200: PhoneBatchResponse, ...errors(400, 401, 429) },
      },
    },
    async (request) => checkBatch(tenantContext(request), phoneCheck, request.body.rows),
  )

  app.post(
    '/v1/check',
    {
      config: { auth: 'optional' },
      bodyLimit: smallBodyLimit(app, CHECK_BODY_LIMIT),
      schema: {
        operationId: 'check',
        summary: 'Judge an email and/or an IP; works without a key (limited per client IP, not recorded)',
        description:
          'With a valid key the check is metered (one unit per identifier), listed in /v1/lookups and includes the operator network. Without one it answers from reference data only: reputation counts are zero, recent_abuse is false and the fraud score has no network signals. Never answers 401.',
        tags: ['checks'],
        security: [],
        querystring: NoQuery,
        body: CombinedBody,
        response: { 200: CombinedResponse, ...errors(400, 429) },
      },
    },
    async (request) => checkCombined(requestContext(request), request.body),
  )
}
