import { tenantContext } from '../context.js'
import { errors, NoQuery } from '../schemas/common.js'
import {
  BatchListsBody,
  BatchListsResult,
  ListEntryInput,
  ListEntryView,
  ListIdParams,
  ListPage,
  ListQuery,
} from '../schemas/lists.js'
import { addListEntries, addListEntry, listEntries, removeListEntry } from '../services/rules/lists.js'
import { digits } from '../util/query.js'
import type { App } from './types.js'

export function registerListRoutes(app: App): void {
  app.get(
    '/v1/lists',
    {
      schema: {
        operationId: 'listListEntries',
        description:
          'Paged with limit and offset, filtered by list, type and status. Emails, IPs and phones are stored hashed, so entries show a masked hint instead of the value.',
        summary: "The tenant's list entries, newest first; filtered by list, type and status",
        tags: ['lists'],
        querystring: ListQuery,
        response: { 200: ListPage, ...errors(400, 401, 429) },
      },
    },
    async (request) => {
      const limit = digits(request.query.limit, 'query.limit', { fallback: 500, min: 1, max: 1000 })
      const offset = digits(request.query.offset, 'query.offset', { fallback: 0 })
      const { list, type, status } = request.query
      return listEntries(tenantContext(request), limit, offset, { list, type, status })
    },
  )

  app.post(
    '/v1/lists',
    {
      schema: {
        operationId: 'createListEntry',
        description:
          'An allow entry lowers the score of matching events, a block entry blocks them, and a named list is one your rules test. An IP entry may be a CIDR range. An optional expiry makes the entry temporary.',
        summary: 'Add a list entry (adding an existing entry returns it)',
        tags: ['lists'],
        querystring: NoQuery,
        body: ListEntryInput,
        response: { 200: ListEntryView, ...errors(400, 401, 429) },
      },
    },
    async (request) => addListEntry(tenantContext(request), request.body),
  )

  app.delete(
    '/v1/lists/:id',
    {
      schema: {
        operationId: 'deleteListEntry',
        description: 'The entry stops matching at once. Unknown ids answer 404.',
        summary: 'Remove a list entry',
        tags: ['lists'],
        params: ListIdParams,
        querystring: NoQuery,
        response: { 200: ListEntryView, ...errors(400, 401, 404, 429) },
      },
    },
    async (request) => {
      const id = digits(request.params.id, 'params.id', { fallback: 0 })
      return removeListEntry(tenantContext(request), id)
    },
  )

  app.post(
    '/v1/batch/lists',
    {
      schema: {
        operationId: 'batchCreateListEntries',
        description:
          'All rows are validated before any is written; the answer lists the entries in the order sent.',
        summary: 'Add up to 1000 list entries at once; one invalid row rejects the whole batch',
        tags: ['lists', 'batch'],
        querystring: NoQuery,
        body: BatchListsBody,
        response: { 200: BatchListsResult, ...errors(400, 401, 429) },
      },
    },
    async (request) => ({ results: await addListEntries(tenantContext(request), request.body.rows) }),
  )
}
