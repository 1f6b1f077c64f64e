import { useState } from 'preact/hooks'
import { api, fmtTime, get, post, query } from '../api'
import { Field, Loading, Page, Problem, ScrollBox, useLoad } from '../ui'

interface Endpoint {
  id: string
  url: string
  description: string
  events: string[]
  enabled: boolean
  disabled_reason: string | null
  failing_since_ms: number | null
  previous_secret_until_ms: number | null
  created_ms: number
}

interface Delivery {
  message_id: string
  event_type: string
  status: string
  attempts: number
  next_attempt_ms: number | null
  last_status_code: number | null
  last_error: string | null
  last_attempt_ms: number | null
  created_ms: number
}

/** The event types of src/services/webhooks/events.ts (the server refuses any other). */
const EVENT_TYPES = [
  'decision.review',
  'decision.block',
  'review.resolved',
  'label.created',
  'list.entry_added',
  'list.entry_removed',
  'config.version_created',
]

const PAGE = 50

/** Endpoints: add, enable or disable, rotate the secret, delete; each links to its deliveries. */
export function WebhooksPage() {
  const { data, error, reload } = useLoad(() => get<{ webhooks: Endpoint[] }>('/v1/webhooks'), [])
  const [url, setUrl] = useState('')
  const [description, setDescription] = useState('')
  const [events, setEvents] = useState<string[]>(['decision.review', 'decision.block', 'review.resolved'])
  const [shown, setShown] = useState<{ id: string; secret: string } | null>(null)
  const [failure, setFailure] = useState<Error | null>(null)
  const act = async (f: () => Promise<{ id?: string; secret?: string }>) => {
    setFailure(null)
    try {
      const r = await f()
      setShown(r.secret && r.id ? { id: r.id, secret: r.secret } : null)
      reload()
    } catch (e) {
      setFailure(e as Error)
    }
  }
  const toggle = (t: string) => setEvents(events.includes(t) ? events.filter((e) => e !== t) : [...events, t])
  return (
    <Page title="Webhooks">
      {shown && (
        <div class="card secret" role="status">
          <p>
            Signing secret of <code>{shown.id}</code>. Copy it now: it is shown once.
          </p>
          <label for="new-secret">Secret</label>
          <input id="new-secret" readOnly value={shown.secret} onFocus={(e) => e.currentTarget.select()} />
        </div>
      )}
      <Problem error={error ?? failure} />
      <form
        class="card"
        aria-label="Add a webhook endpoint"
        onSubmit={(e) => {
          e.preventDefault()
          void act(() => post('/v1/webhooks', { url, events, ...(description ? { description } : {}) }))
        }}
      >
        <h2>Add an endpoint</h2>
        <p class="hint">
          Messages are signed (Standard Webhooks) and retried for about a day; see docs/webhooks.md.
        </p>
        <Field label="URL (https)" id="wh-url">
          <input
            id="wh-url"
            required
            type="url"
            placeholder="https://example.com/verdict-hook"
            value={url}
            onInput={(e) => setUrl(e.currentTarget.value)}
          />
        </Field>
        <Field label="Description" id="wh-description">
          <input
            id="wh-description"
            maxLength={256}
            value={description}
            onInput={(e) => setDescription(e.currentTarget.value)}
          />
        </Field>
        <fieldset>
          <legend>Events</legend>
          {EVENT_TYPES.map((t) => (
            <label key={t} class="check">
              <input type="checkbox" checked={events.includes(t)} onChange={() => toggle(t)} />{' '}
              <code>{t}</code>
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={events.length === 0}>
          Add endpoint
        </button>
      </form>
      {!data && !error && <Loading what="webhook endpoints" />}
      {data && (
        <ScrollBox>
          <table>
            <caption>{data.webhooks.length} endpoints</caption>
            <thead>
              <tr>
                <th scope="col">Endpoint</th>
                <th scope="col">Events</th>
                <th scope="col">State</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.webhooks.map((w) => (
                <tr key={w.id}>
                  <td>
                    <a href={`#/webhooks/${encodeURIComponent(w.id)}`}>{w.url}</a>
                    <br />
                    <span class="hint">
                      {w.id}
                      {w.description ? ` · ${w.description}` : ''}
                    </span>
                  </td>
                  <td>{w.events.join(', ')}</td>
                  <td>
                    {w.enabled ? 'enabled' : `disabled: ${w.disabled_reason ?? ''}`}
                    {w.failing_since_ms !== null && (
                      <div class="hint">failing since {fmtTime(w.failing_since_ms)}</div>
                    )}
                    {w.previous_secret_until_ms !== null && (
                      <div class="hint">old secret signs until {fmtTime(w.previous_secret_until_ms)}</div>
                    )}
                  </td>
                  <td>
                    <span class="actions">
                      <button
                        type="button"
                        aria-label={`${w.enabled ? 'Disable' : 'Enable'} ${w.id}`}
                        onClick={() =>
                          act(() => api('PATCH', `/v1/webhooks/${w.id}`, { enabled: !w.enabled }))
                        }
                      >
                        {w.enabled ? 'Disable' : 'Enable'}
                      </button>
                      <button
                        type="button"
                        aria-label={`Rotate the secret of ${w.id}`}
                        onClick={() => act(() => post(`/v1/webhooks/${w.id}/rotate-secret`, {}))}
                      >
                        Rotate secret
                      </button>
                      <button
                        type="button"
                        aria-label={`Delete ${w.id}`}
                        onClick={() => {
                          if (confirm(`Delete the endpoint ${w.url} and its deliveries?`))
                            void act(() => api('DELETE', `/v1/webhooks/${w.id}`))
                        }}
                      >
                        Delete
                      </button>
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
    </Page>
  )
}

/** One endpoint's deliveries, newest first, with redelivery. */
export function WebhookDeliveriesPage({ id }: { id: string }) {
  const [status, setStatus] = useState('')
  const [offset, setOffset] = useState(0)
  const { data, error, reload } = useLoad(
    () =>
      get<{ deliveries: Delivery[]; total: number }>(
        `/v1/webhooks/${encodeURIComponent(id)}/deliveries${query({ limit: PAGE, offset, status })}`,
      ),
    [id, status, offset],
  )
  const [notice, setNotice] = useState('')
  const [failure, setFailure] = useState<Error | null>(null)
  const redeliver = async (messageId: string) => {
    setFailure(null)
    try {
      await post(`/v1/webhooks/${encodeURIComponent(id)}/deliveries/${messageId}/redeliver`)
      setNotice(`${messageId} queued again.`)
      reload()
    } catch (e) {
      setFailure(e as Error)
    }
  }
  return (
    <Page title="Webhook deliveries">
      <p>
        <a href="#/webhooks">All endpoints</a> · <code>{id}</code> · kept 30 days
      </p>
      <p role="status" class="status">
        {notice}
      </p>
      <Problem error={error ?? failure} />
      <Field label="Status" id="wh-status">
        <select
          id="wh-status"
          value={status}
          onChange={(e) => {
            setOffset(0)
            setStatus(e.currentTarget.value)
          }}
        >
          <option value="">any</option>
          <option value="pending">pending</option>
          <option value="delivered">delivered</option>
          <option value="failed">failed</option>
        </select>
      </Field>
      {!data && !error && <Loading what="deliveries" />}
      {data && (
        <ScrollBox>
          <table>
            <caption>{data.total} deliveries</caption>
            <thead>
              <tr>
                <th scope="col">Created (UTC)</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last answer</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.deliveries.map((d) => (
                <tr key={d.message_id}>
                  <td>
                    {fmtTime(d.created_ms)}
                    <br />
                    <span class="hint">{d.message_id}</span>
                  </td>
                  <td>
                    <code>{d.event_type}</code>
                  </td>
                  <td>
                    {d.status}
                    {d.next_attempt_ms !== null && <div class="hint">next {fmtTime(d.next_attempt_ms)}</div>}
                  </td>
                  <td class="num">{d.attempts}</td>
                  <td>
                    {d.last_status_code ?? '–'} {d.last_error ?? ''}
                  </td>
                  <td>
                    <button
                      type="button"
                      aria-label={`Redeliver ${d.message_id}`}
                      onClick={() => redeliver(d.message_id)}
                    >
                      Redeliver
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
      {data && (
        <p>
          <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
            Newer
          </button>{' '}
          <button
            type="button"
            disabled={offset + PAGE >= data.total}
            onClick={() => setOffset(offset + PAGE)}
          >
            Older
          </button>
        </p>
      )}
    </Page>
  )
}
