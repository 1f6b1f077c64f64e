import { type ComponentChildren, Fragment } from 'preact'
import { useState } from 'preact/hooks'
import { fmtTime, get, post, query } from '../api'
import type { EventDetail, EventView } from '../types'
import { Field, Loading, Page, Problem, ScrollBox, useLoad, Verdict } from '../ui'

const PAGE = 25

/** A datetime-local value read as UTC (the console shows times in UTC), as ms; undefined when empty. */
const utcMs = (v: string) => (v ? String(Date.parse(`${v}Z`)) : undefined)

/** A word that must not break inside (a date, a clock time, an id, a reason code); lines break between. */
const Tok = ({ children, id }: { children: ComponentChildren; id?: boolean }) => (
  <span class={id ? 'tok id' : 'tok'}>{children}</span>
)

/** A UTC time as two unbreakable words: the date and the clock time. */
export function Time({ ms }: { ms: number }) {
  const [date, clock] = fmtTime(ms).split(' ')
  return (
    <>
      <Tok>{date}</Tok> <Tok>{clock}</Tok>
    </>
  )
}

/**
 * The events table. On a narrow screen the event name, user and score columns give way (the event page
 * shows them), so the reasons stay on screen next to the time and the verdict.
 */
export function EventTable({ events, caption }: { events: EventView[]; caption: string }) {
  return (
    <ScrollBox>
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Time (UTC)</th>
            <th scope="col" class="wide-only">
              Event
            </th>
            <th scope="col" class="wide-only">
              User
            </th>
            <th scope="col">Verdict</th>
            <th scope="col" class="wide-only">
              Score
            </th>
            <th scope="col">Reasons</th>
          </tr>
        </thead>
        <tbody>
          {events.map((e) => (
            <tr key={e.id}>
              <td class="time">
                <a href={`#/events/${encodeURIComponent(e.id)}`}>
                  <Time ms={e.createdMs} />
                </a>
              </td>
              <td class="wide-only">
                <Tok>{e.event}</Tok>
              </td>
              <td class="wide-only" title={e.userId ?? undefined}>
                {e.userId === null ? '–' : <Tok id>{e.userId}</Tok>}
              </td>
              <td>
                <Verdict v={e.verdict} />
              </td>
              <td class="num wide-only">{e.score}</td>
              <td class="reasons">
                {e.reasons.length === 0
                  ? '–'
                  : e.reasons.map((r, i) => (
                      <Fragment key={r}>
                        {i > 0 && ', '}
                        <Tok>{r}</Tok>
                      </Fragment>
                    ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  )
}

/** The count stops at 10,000 (or the search at its window): "10000+" then. */
/** GET /v1/events takes offsets up to 1,000; older events are reached by narrowing the time range. */
const MAX_OFFSET = 1000
const totalText = (d: { total: number; totalCapped?: boolean }) => `${d.total}${d.totalCapped ? '+' : ''}`

export function EventsPage({ params }: { params: URLSearchParams }) {
  const verdict = params.get('verdict') ?? ''
  const event = params.get('event') ?? ''
  const q = params.get('q') ?? ''
  const reason = params.get('reason') ?? ''
  const from = params.get('from') ?? ''
  const to = params.get('to') ?? ''
  const offset = Number(params.get('offset') ?? 0)
  const current = { verdict, event, q, reason, from, to }
  const [form, setForm] = useState(current)
  const { data, error } = useLoad(
    () =>
      get<{ events: EventView[]; total: number; totalCapped?: boolean }>(
        `/v1/events${query({
          verdict,
          event,
          q,
          reason,
          since_ms: utcMs(from),
          until_ms: utcMs(to),
          limit: PAGE,
          offset: offset || undefined,
        })}`,
      ),
    [verdict, event, q, reason, from, to, offset],
  )
  const go = (o: number, f = form) => {
    location.hash = `#/events${query({ ...f, offset: o || undefined })}`
  }
  return (
    <Page title="Events">
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault()
          go(0)
        }}
      >
        <Field label="Verdict" id="f-verdict">
          <select
            id="f-verdict"
            value={form.verdict}
            onChange={(e) => setForm({ ...form, verdict: e.currentTarget.value })}
          >
            <option value="">any</option>
            <option value="allow">allow</option>
            <option value="review">review</option>
            <option value="block">block</option>
          </select>
        </Field>
        <Field label="Event name" id="f-event">
          <input
            id="f-event"
            value={form.event}
            onInput={(e) => setForm({ ...form, event: e.currentTarget.value })}
          />
        </Field>
        <Field label="User or device id contains" id="f-q">
          <input id="f-q" value={form.q} onInput={(e) => setForm({ ...form, q: e.currentTarget.value })} />
        </Field>
        <Field label="Reason code" id="f-reason">
          <input
            id="f-reason"
            pattern="[a-z0-9_]{1,64}"
            value={form.reason}
            onInput={(e) => setForm({ ...form, reason: e.currentTarget.value })}
          />
        </Field>
        <Field label="From (UTC)" id="f-from">
          <input
            id="f-from"
            type="datetime-local"
            value={form.from}
            onInput={(e) => setForm({ ...form, from: e.currentTarget.value })}
          />
        </Field>
        <Field label="Until (UTC)" id="f-to">
          <input
            id="f-to"
            type="datetime-local"
            value={form.to}
            onInput={(e) => setForm({ ...form, to: e.currentTarget.value })}
          />
        </Field>
        <button type="submit">Filter</button>
      </form>
      <Problem error={error} />
      {!data && !error && <Loading what="events" />}
      {data && (
        <>
          <EventTable events={data.events} caption={`${totalText(data)} events`} />
          <div class="pager">
            <button
              type="button"
              disabled={offset === 0}
              onClick={() => go(Math.max(0, offset - PAGE), current)}
            >
              Newer
            </button>
            <span>
              {data.total === 0 ? 0 : offset + 1}–{Math.min(offset + PAGE, data.total)} of {totalText(data)}
            </span>
            <button
              type="button"
              disabled={offset + PAGE >= data.total || offset + PAGE > MAX_OFFSET}
              title={offset + PAGE > MAX_OFFSET ? 'Narrow the time range to see older events' : undefined}
              onClick={() => go(offset + PAGE, current)}
            >
              Older
            </button>
          </div>
        </>
      )}
    </Page>
  )
}

function Evidence({ value }: { value: Record<string, unknown> | undefined }) {
  if (!value || Object.keys(value).length === 0) return <span>–</span>
  return (
    <dl class="evidence">
      {Object.entries(value).map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{typeof v === 'object' ? JSON.stringify(v) : String(v)}</dd>
        </div>
      ))}
    </dl>
  )
}

function DeviceProfile({ device }: { device: NonNullable<EventDetail['device']> }) {
  const p = device.profile
  const rows: [string, string][] = [
    ['Resolved id', device.resolvedId],
    ['First seen', p.firstSeenMs === null ? '–' : `${fmtTime(p.firstSeenMs)} UTC`],
    ['Last seen', p.lastSeenMs === null ? '–' : `${fmtTime(p.lastSeenMs)} UTC`],
    ['Scores', String(p.observations)],
    ['Networks (addresses)', String(p.distinctIps)],
    ['Accounts', String(p.accounts)],
    ['Countries', String(p.countries)],
    [
      'Browser (latest beacon)',
      p.browser
        ? `${p.browser.browser ?? '?'} on ${p.browser.os ?? '?'}${p.browser.mobile ? ', mobile' : ''}`
        : 'no beacon',
    ],
  ]
  return (
    <dl class="keys device-profile">
      {rows.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  )
}

export function EventPage({ id }: { id: string }) {
  const [status, setStatus] = useState('')
  const [failure, setFailure] = useState<Error | null>(null)
  const { data, error, reload } = useLoad(
    () => get<EventDetail>(`/console/api/events/${encodeURIComponent(id)}`),
    [id],
  )
  if (error)
    return (
      <Page title="Event not found">
        <Problem error={error} />
        <p>
          <a href="#/events">Back to events</a>
        </p>
      </Page>
    )
  if (!data) return <Loading what="the event" />
  const e = data.event
  // Any event can be labelled here, not only queued ones: a wrongly blocked customer is marked legit.
  const mark = async (label: 'fraud' | 'legit') => {
    setFailure(null)
    try {
      await post('/v1/label', { label, event_id: e.id })
      setStatus(`Labelled ${label}.`)
      reload()
    } catch (err) {
      setFailure(err as Error)
    }
  }
  const keys: [string, string | number | null][] = [
    ['User id', e.userId],
    ['Device id', e.deviceId],
    ['Resolved device', e.resolvedDeviceId],
    ['Email hash', e.emailHash],
    ['Email domain', e.emailDomain],
    ['IP prefix', e.ipPrefix],
    ['ASN', e.asn],
    ['IP country', e.ipCountry],
    ['Phone hash', e.phoneHash],
    ['Phone country', e.phoneCountry],
  ]
  return (
    <Page title={`Event ${e.event}`}>
      <p class="summary">
        <Verdict v={e.verdict} /> <span class="score">score {e.score}</span>{' '}
        <span>
          <Time ms={e.createdMs} /> UTC
        </span>{' '}
        <code class="tok">{e.id}</code>
      </p>
      <p class="explanation">{data.explanation}</p>
      <h2>Checks</h2>
      <ScrollBox>
        <table>
          <caption class="sr-only">Checks that fired</caption>
          <thead>
            <tr>
              <th scope="col">Check</th>
              <th scope="col">Reason</th>
              <th scope="col">Weight</th>
              <th scope="col">Message</th>
              <th scope="col">Evidence</th>
            </tr>
          </thead>
          <tbody>
            {e.checks.map((c, i) => (
              <tr key={i} class="check">
                <td>{c.check}</td>
                <td>
                  <code>{c.reason}</code>
                </td>
                <td class="num">{c.weight}</td>
                <td>{c.message}</td>
                <td>
                  <Evidence value={c.evidence} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollBox>
      {e.checks.length === 0 && <p>No check fired.</p>}
      <h2>Identity keys</h2>
      <dl class="keys">
        {keys.map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v ?? '–'}</dd>
          </div>
        ))}
      </dl>
      <h2>Labels</h2>
      <div class="actions">
        <button type="button" onClick={() => void mark('fraud')}>
          Fraud
        </button>
        <button type="button" onClick={() => void mark('legit')}>
          Legit
        </button>
      </div>
      <p role="status">{status}</p>
      <Problem error={failure} />
      {data.labels.length === 0 ? (
        <p>No label yet.</p>
      ) : (
        <ul class="labels">
          {data.labels.map((l) => (
            <li key={l.id}>
              <span class={`label label-${l.label}`}>{l.label}</span> {fmtTime(l.createdMs)} UTC
              {l.note ? ` — ${l.note}` : ''}
            </li>
          ))}
        </ul>
      )}
      <h2>Device</h2>
      {data.device && <DeviceProfile device={data.device} />}
      {data.device ? (
        <ScrollBox>
          <table>
            <caption>Recent timeline of device {data.device.resolvedId}</caption>
            <thead>
              <tr>
                <th scope="col">Time (UTC)</th>
                <th scope="col">Resolution</th>
                <th scope="col">Network</th>
                <th scope="col">Country</th>
                <th scope="col">Connection</th>
                <th scope="col">Verdict</th>
              </tr>
            </thead>
            <tbody>
              {data.device.timeline.map((o) => (
                <tr key={o.eventId}>
                  <td>
                    <a href={`#/events/${encodeURIComponent(o.eventId)}`}>{fmtTime(o.createdMs)}</a>
                  </td>
                  <td>{o.resolution}</td>
                  <td>
                    {o.networkPrefix ?? '–'} {o.asn ? `AS${o.asn}` : ''}
                  </td>
                  <td>{o.country ?? '–'}</td>
                  <td>{o.connectionType ?? '–'}</td>
                  <td>
                    <Verdict v={o.verdict} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      ) : (
        <p>The event carried no device.</p>
      )}
    </Page>
  )
}
