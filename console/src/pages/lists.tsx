import { useState } from 'preact/hooks'
import { api, fmtTime, get, post, query } from '../api'
import { type CsvRow, listCsv, parseListCsv, TYPES } from '../csv'
import { Field, Loading, Page, Problem, ScrollBox, useLoad } from '../ui'

interface Entry {
  id: string
  list: string
  type: string
  hint: string
  value?: string
  createdMs: number
  expires_ms?: number
  note?: string
}
type Row = CsvRow

const LISTS = ['block', 'allow']
const CHUNK = 100
const PAGE = 100

/** Every entry, page by page, as CSV: the download of the Export button. */
async function exportCsv(): Promise<string> {
  const all: Entry[] = []
  for (let offset = 0; ; offset += 1000) {
    const page = await get<{ entries: Entry[]; total: number }>(`/v1/lists${query({ limit: 1000, offset })}`)
    all.push(...page.entries)
    if (page.entries.length < 1000 || all.length >= page.total) break
  }
  return listCsv(all)
}

function Export() {
  const [busy, setBusy] = useState(false)
  const [failure, setFailure] = useState<Error | null>(null)
  const run = async () => {
    setBusy(true)
    setFailure(null)
    try {
      const url = URL.createObjectURL(new Blob([await exportCsv()], { type: 'text/csv' }))
      const a = document.createElement('a')
      a.href = url
      a.download = 'lists.csv'
      a.click()
      URL.revokeObjectURL(url)
    } catch (err) {
      setFailure(err as Error)
    } finally {
      setBusy(false)
    }
  }
  return (
    <div>
      <button type="button" disabled={busy} onClick={() => void run()}>
        Export CSV
      </button>
      <Problem error={failure} />
    </div>
  )
}

function Import({ done }: { done: () => void }) {
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null)
  const [errors, setErrors] = useState<{ line: number; error: string }[]>([])
  const [summary, setSummary] = useState('')
  const run = async (file: File) => {
    const parsed = parseListCsv(await file.text())
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
        One entry per line: <code>list,type,value,expires_ms,note</code> (the last two optional; a header line
        may name the columns in any order), for example <code>block,ip,203.0.113.0/24,,office</code>.
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
          <input
            id="l-list"
            list="l-lists"
            required
            pattern="[a-z][a-z0-9_]{0,39}"
            value={form.list}
            onInput={(e) => setForm({ ...form, list: e.currentTarget.value })}
          />
          <datalist id="l-lists">
            {LISTS.map((l) => (
              <option key={l} value={l} />
            ))}
          </datalist>
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
            <caption>
              {data.total} entries (emails, IPs and phones are stored hashed and shown masked)
            </caption>
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
      <Export />
    </Page>
  )
}
