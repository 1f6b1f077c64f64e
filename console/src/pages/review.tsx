import { useEffect, useRef, useState } from 'preact/hooks'
import { fmtTime, get, post } from '../api'
import type { EventView } from '../types'
import { Field, Loading, Page, Problem, useLoad, Verdict } from '../ui'

/**
 * Events waiting for a decision, oldest first. One click (or F / L on the keyboard, outside the note
 * field) labels the current event and the queue moves on; S skips it for now.
 */
export function ReviewPage() {
  const { data, error, reload } = useLoad(
    () => get<{ events: EventView[]; total: number }>('/console/api/review?limit=50'),
    [],
  )
  const [skipped, setSkipped] = useState<string[]>([])
  const [note, setNote] = useState('')
  const [status, setStatus] = useState('')
  const [failure, setFailure] = useState<Error | null>(null)
  const queue = (data?.events ?? []).filter((e) => !skipped.includes(e.id))
  const current = queue[0]

  const decide = async (label: 'fraud' | 'legit') => {
    if (!current) return
    setFailure(null)
    try {
      await post('/v1/label', { label, event_id: current.id, ...(note.trim() ? { note: note.trim() } : {}) })
      setStatus(`Labelled ${current.event} at ${fmtTime(current.createdMs)} as ${label}.`)
      setNote('')
      reload()
    } catch (e) {
      setFailure(e as Error)
    }
  }

  // One listener for the page's life, reading the latest render: no key press falls between two renders.
  const latest = useRef({ decide, skip: () => {} })
  latest.current = { decide, skip: () => current && setSkipped([...skipped, current.id]) }
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement
      if (e.ctrlKey || e.metaKey || e.altKey || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName)) return
      if (e.key === 'f') void latest.current.decide('fraud')
      else if (e.key === 'l') void latest.current.decide('legit')
      else if (e.key === 's') latest.current.skip()
    }
    addEventListener('keydown', onKey)
    return () => removeEventListener('keydown', onKey)
  }, [])

  return (
    <Page title="Review queue">
      <p class="hint">
        Keyboard: <kbd>F</kbd> fraud, <kbd>L</kbd> legit, <kbd>S</kbd> skip (when the note field is not
        focused).
      </p>
      <p role="status" class="status">
        {status}
      </p>
      <Problem error={error ?? failure} />
      {!data && !error && <Loading what="the queue" />}
      {data && !current && <p>Nothing to review. </p>}
      {current && (
        <article class="card review-item" aria-label="Event to review">
          <p>
            <strong>{data!.total - skipped.length}</strong> waiting · oldest first
          </p>
          <h2>
            <a href={`#/events/${encodeURIComponent(current.id)}`}>
              {current.event} · {fmtTime(current.createdMs)} UTC
            </a>
          </h2>
          <p>
            <Verdict v={current.verdict} /> score {current.score} · user {current.userId ?? '–'}
          </p>
          <ul class="reasons">
            {current.checks.map((c, i) => (
              <li key={i}>
                <code>{c.reason}</code> ({c.weight}) {c.message}
              </li>
            ))}
          </ul>
          <Field label="Note (optional)" id="review-note">
            <textarea
              id="review-note"
              rows={2}
              maxLength={500}
              value={note}
              onInput={(e) => setNote(e.currentTarget.value)}
            />
          </Field>
          <div class="actions">
            <button type="button" class="danger" onClick={() => decide('fraud')}>
              Fraud
            </button>
            <button type="button" class="ok" onClick={() => decide('legit')}>
              Legit
            </button>
            <button type="button" onClick={() => setSkipped([...skipped, current.id])}>
              Skip
            </button>
          </div>
        </article>
      )}
    </Page>
  )
}
