import { useState } from 'preact/hooks'
import { fmtTime, get, post } from '../api'
import { downloadJson, Field, Page, Problem, ScrollBox, useLoad } from '../ui'

const KINDS = [
  ['user_id', 'User id'],
  ['email', 'Email'],
  ['phone', 'Phone'],
  ['ip', 'IP address'],
  ['device_id', 'Device id'],
] as const

interface Suppression {
  action: string
  entityType: string
  valueHash: string
  eventId: string | null
  createdMs: number
}

function Subject({
  prefix,
  value,
  set,
}: {
  prefix: string
  value: Record<string, string>
  set: (v: Record<string, string>) => void
}) {
  return (
    <>
      {KINDS.map(([k, label]) => (
        <Field key={k} label={label} id={`${prefix}-${k}`}>
          <input
            id={`${prefix}-${k}`}
            value={value[k] ?? ''}
            onInput={(e) => set({ ...value, [k]: e.currentTarget.value })}
          />
        </Field>
      ))}
    </>
  )
}

const filled = (v: Record<string, string>) =>
  Object.fromEntries(Object.entries(v).filter(([, x]) => x.trim() !== ''))

export function PrivacyPage() {
  const audit = useLoad(() => get<{ suppressions: Suppression[] }>('/v1/suppressions?limit=100'), [])
  const [exp, setExp] = useState<Record<string, string>>({})
  const [del, setDel] = useState<Record<string, string>>({})
  const [confirmText, setConfirmText] = useState('')
  const [status, setStatus] = useState('')
  const [failure, setFailure] = useState<Error | null>(null)

  const doExport = async (e: Event) => {
    e.preventDefault()
    setFailure(null)
    try {
      const data = await post<{ counts: Record<string, number> }>('/v1/subject', filled(exp))
      downloadJson('subject-export.json', data)
      setStatus(
        `Export ready: ${Object.entries(data.counts)
          .map(([k, n]) => `${n} ${k}`)
          .join(', ')}.`,
      )
    } catch (err) {
      setFailure(err as Error)
    }
  }
  const doErase = async (e: Event) => {
    e.preventDefault()
    setFailure(null)
    try {
      const r = await post<{ deleted: Record<string, number>; suppressions: number }>(
        '/v1/forget',
        filled(del),
      )
      setStatus(
        `Erased: ${Object.entries(r.deleted)
          .map(([k, n]) => `${n} ${k}`)
          .join(', ')}; ${r.suppressions} suppressions written.`,
      )
      setDel({})
      setConfirmText('')
      audit.reload()
    } catch (err) {
      setFailure(err as Error)
    }
  }
  const canErase = confirmText === 'ERASE' && Object.keys(filled(del)).length > 0
  return (
    <Page title="Privacy">
      <p role="status">{status}</p>
      <Problem error={failure} />
      <div class="grid">
        <form class="card" aria-label="Subject export" onSubmit={doExport}>
          <h2>Subject export</h2>
          <p class="hint">Everything held about a person, as a JSON file.</p>
          <Subject prefix="exp" value={exp} set={setExp} />
          <button type="submit" disabled={Object.keys(filled(exp)).length === 0}>
            Download export
          </button>
        </form>
        <form class="card" aria-label="Erasure" onSubmit={doErase}>
          <h2>Erasure</h2>
          <p class="hint">
            Deletes every record of the person and keeps a one-way hash so they stay forgotten.
          </p>
          <Subject prefix="del" value={del} set={setDel} />
          <Field label="Type ERASE to confirm" id="erase-confirm">
            <input
              id="erase-confirm"
              autocomplete="off"
              value={confirmText}
              onInput={(e) => setConfirmText(e.currentTarget.value)}
            />
          </Field>
          <button type="submit" class="danger" disabled={!canErase}>
            Erase
          </button>
        </form>
      </div>
      <h2>Suppression audit</h2>
      <Problem error={audit.error} />
      {audit.data && (
        <ScrollBox>
          <table>
            <caption>Latest {audit.data.suppressions.length} suppressions (hashes only)</caption>
            <thead>
              <tr>
                <th scope="col">When (UTC)</th>
                <th scope="col">Action</th>
                <th scope="col">Kind</th>
                <th scope="col">Hash</th>
                <th scope="col">Event</th>
              </tr>
            </thead>
            <tbody>
              {audit.data.suppressions.map((s, i) => (
                <tr key={i}>
                  <td>{fmtTime(s.createdMs)}</td>
                  <td>{s.action}</td>
                  <td>{s.entityType}</td>
                  <td>
                    <code>{s.valueHash.slice(0, 16)}…</code>
                  </td>
                  <td>{s.eventId ?? '–'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
    </Page>
  )
}
