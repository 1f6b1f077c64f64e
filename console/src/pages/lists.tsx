import { useState } from 'preact/hooks'
import { api, fmtTime, get, post, query } from '../api'
import { Field, Loading, Page, Problem, ScrollBox, useLoad } from '../ui'

interface Entry {
  id: string
  list: string
  type: string
  hint: string
  createdMs: number
}
interface Row {
  list: string
  type: string
  value: string
}

const LISTS = ['block', 'allow']
const TYPES = ['email', 'ip', 'device', 'user']
const CHUNK = 100
const PAGE = 100

/** `list,type,value` per line; a header line naming those columns is skipped. */
export function parseCsv(text: string): {
  rows: { line: number; row: Row }[]
  errors: { line: number; error: string }[]
} {
  const rows: { line: number; row: Row }[] = []
  const errors: { line: number; error: string }[] = []
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = i + 1
    if (raw.trim() === '') return
    const [list = '', type = '', ...rest] = raw.split(',').map((c) => c.trim().replace(/^"(.*)"$/, '$1'))
    const value = rest.join(',').trim()
    if (line === 1 && list.toLowerCase() === 'list') return
    if (!LISTS.includes(list)) errors.push({ line, error: `list must be block or allow, not "${list}"` })
    else if (!TYPES.includes(type)) errors.push({ line, error: `type must be one of ${TYPES.join(', ')}` })
    else if (value === '' || value.length > 320)
      errors.push({ line, error: 'value must be 1-320 characters' })
    else rows.push({ line, row: { list, type, value } })
  })
  return { rows, errors }
}

function Import({ done }: { done: () => void }) {
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null)
  const [errors, setErrors] = useState<{ line: number; error: string }[]>([])
  const [summary, setSummary] = useState('')
  const run = async (file: File) => {
    const parsed = parseCsv(await file.text())
    const errs = [...parsed.errors]
    let added = 0
    setSummary('')
    setProgress({ done: 0, total: parsed.rows.length })
    for (let i = 0; i < parsed.rows.length; i += CHUNK) {
      const chunk = parsed.rows.slice(i, i + CHUNK)
      try {
        await post('/v1/batch/lists', { rows: chunk.map((r) => r.row) })
        added += chunk.length
      } catch {
        // The batch is all or nothing: row by row tells which rows the server refused, and why.
        for (const r of chunk) {
          try {
            await post('/v1/lists', r.row)
            added++
          } catch (e) {
            errs.push({ line: r.line, error: (e as Error).message })
          }
        }
      }
      setProgress({ done: Math.min(i + CHUNK, parsed.rows.length), total: parsed.rows.length })
    }
    errs.sort((a, b) => a.line - b.line)
    setErrors(errs)
    setSummary(`Imported ${added} entries; ${errs.length} rows refused.`)
    done()
  }
  return (
    <form class="card" aria-label="Import a CSV file" onSubmit={(e) => e.preventDefault()}>
      <h2>Bulk import</h2>
      <p class="hint">
        One entry per line: <code>list,type,value</code>, for example{' '}
        <code>block,email,someone@example.com</code>.
      </p>
      <Field label="CSV file" id="csv">
        <input
          id="csv"
          type="file"
          accept=".csv,text/csv,text/plain"
          onChange={(e) => {
            const f = e.currentTarget.files?.[0]
            if (f) void run(f)
          }}
        />
      </Field>
      {progress && (
        <div>
          <label for="import-progress">Import progress</label>
          <progress id="import-progress" max={progress.total || 1} value={progress.done} />
          <span>
            {' '}
            {progress.done} / {progress.total}
          </span>
        </div>
      )}
      <p role="status">{summary}</p>
      {errors.length > 0 && (
        <table>
          <caption>Rows not imported</caption>
          <thead>
            <tr>
              <th scope="col">Line</th>
              <th scope="col">Problem</th>
            </tr>
          </thead>
          <tbody>
            {errors.map((e) => (
              <tr key={e.line}>
                <td class="num">{e.line}</td>
                <td>{e.error}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </form>
  )
}

export function ListsPage() {
  const [offset, setOffset] = useState(0)
  const { data, error, reload } = useLoad(
    () => get<{ entries: Entry[]; total: number }>(`/v1/lists${query({ limit: PAGE, offset })}`),
    [offset],
  )
  const [form, setForm] = useState<Row>({ list: 'block', type: 'email', value: '' })
  const [failure, setFailure] = useState<Error | null>(null)
  const [status, setStatus] = useState('')
  const add = async (e: Event) => {
    e.preventDefault()
    setFailure(null)
    try {
      await post('/v1/lists', { ...form, value: form.value.trim() })
      setStatus(`Added to the ${form.list} list.`)
      setForm({ ...form, value: '' })
      reload()
    } catch (err) {
      setFailure(err as Error)
    }
  }
  const remove = async (entry: Entry) => {
    setFailure(null)
    try {
      await api('DELETE', `/v1/lists/${entry.id}`)
      setStatus(`Removed ${entry.hint} from the ${entry.list} list.`)
      reload()
    } catch (err) {
      setFailure(err as Error)
    }
  }
  return (
    <Page title="Lists">
      <form class="card filters" aria-label="Add an entry" onSubmit={add}>
        <Field label="List" id="l-list">
          <select
            id="l-list"
            value={form.list}
            onChange={(e) => setForm({ ...form, list: e.currentTarget.value })}
          >
            {LISTS.map((l) => (
              <option key={l}>{l}</option>
            ))}
          </select>
        </Field>
        <Field label="Type" id="l-type">
          <select
            id="l-type"
            value={form.type}
            onChange={(e) => setForm({ ...form, type: e.currentTarget.value })}
          >
            {TYPES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </Field>
        <Field label="Value" id="l-value">
          <input
            id="l-value"
            required
            maxLength={320}
            value={form.value}
            onInput={(e) => setForm({ ...form, value: e.currentTarget.value })}
          />
        </Field>
        <button type="submit">Add entry</button>
      </form>
      <p role="status">{status}</p>
      <Problem error={error ?? failure} />
      {!data && !error && <Loading what="the lists" />}
      {data && (
        <ScrollBox>
          <table>
            <caption>{data.total} entries (emails and IPs are stored hashed and shown masked)</caption>
            <thead>
              <tr>
                <th scope="col">List</th>
                <th scope="col">Type</th>
                <th scope="col">Entry</th>
                <th scope="col">Added (UTC)</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.entries.map((e) => (
                <tr key={e.id}>
                  <td>{e.list}</td>
                  <td>{e.type}</td>
                  <td>{e.hint}</td>
                  <td>{fmtTime(e.createdMs)}</td>
                  <td>
                    <button
                      type="button"
                      onClick={() => remove(e)}
                      aria-label={`Remove ${e.hint} from the ${e.list} list`}
                    >
                      Remove
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <div class="pager">
            <button
              type="button"
              disabled={offset === 0}
              onClick={() => setOffset(Math.max(0, offset - PAGE))}
            >
              Previous
            </button>
            <button
              type="button"
              disabled={offset + PAGE >= data.total}
              onClick={() => setOffset(offset + PAGE)}
            >
              Next
            </button>
          </div>
        </ScrollBox>
      )}
      <Import done={reload} />
    </Page>
  )
}
