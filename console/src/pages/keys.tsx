import { useState } from 'preact/hooks'
import { fmtTime, get, post } from '../api'
import { Field, Loading, Page, Problem, ScrollBox, useLoad } from '../ui'

interface Key {
  keyId: string
  prefix: string
  kind: string
  origins: string[]
  createdMs: number
  revokedMs: number | null
  lastUsedMs: number | null
  replacedBy: string | null
}

export function KeysPage() {
  const { data, error, reload } = useLoad(() => get<{ keys: Key[] }>('/console/api/keys'), [])
  const [shown, setShown] = useState<{ keyId: string; apiKey: string } | null>(null)
  const [origins, setOrigins] = useState('')
  const [failure, setFailure] = useState<Error | null>(null)
  const act = async (f: () => Promise<{ keyId: string; apiKey?: string }>) => {
    setFailure(null)
    try {
      const r = await f()
      setShown(r.apiKey ? { keyId: r.keyId, apiKey: r.apiKey } : null)
      reload()
    } catch (e) {
      setFailure(e as Error)
    }
  }
  return (
    <Page title="Keys">
      {shown && (
        <div class="card secret" role="status">
          <p>
            New key <code>{shown.keyId}</code>. Copy it now: it is shown once and only its hash is stored.
          </p>
          <label for="new-key">API key</label>
          <input id="new-key" readOnly value={shown.apiKey} onFocus={(e) => e.currentTarget.select()} />
        </div>
      )}
      <Problem error={error ?? failure} />
      <div class="grid">
        <form
          class="card"
          aria-label="Create a secret key"
          onSubmit={(e) => {
            e.preventDefault()
            void act(() => post('/console/api/keys', {}))
          }}
        >
          <h2>Secret key</h2>
          <p class="hint">For your servers: scores, checks, labels, everything under /v1.</p>
          <button type="submit">Create secret key</button>
        </form>
        <form
          class="card"
          aria-label="Create a publishable key"
          onSubmit={(e) => {
            e.preventDefault()
            const list = origins.split(/[\s,]+/).filter(Boolean)
            void act(() => post('/console/api/keys', { publishable: true, origins: list }))
          }}
        >
          <h2>Publishable key</h2>
          <p class="hint">For the browser beacon only, from these page origins.</p>
          <Field label="Origins (comma separated)" id="origins">
            <input
              id="origins"
              required
              placeholder="https://shop.example"
              value={origins}
              onInput={(e) => setOrigins(e.currentTarget.value)}
            />
          </Field>
          <button type="submit">Create publishable key</button>
        </form>
      </div>
      {!data && !error && <Loading what="keys" />}
      {data && (
        <ScrollBox>
          <table>
            <caption>{data.keys.length} keys</caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Kind</th>
                <th scope="col">Origins</th>
                <th scope="col">Created (UTC)</th>
                <th scope="col">State</th>
                <th scope="col">Last used (UTC)</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.keys.map((k) => (
                <tr key={k.keyId}>
                  <td>
                    <code>{k.prefix}…</code> <span class="hint">{k.keyId}</span>
                  </td>
                  <td>{k.kind}</td>
                  <td>{k.origins.join(', ') || '–'}</td>
                  <td>{fmtTime(k.createdMs)}</td>
                  <td>
                    {k.replacedBy && k.revokedMs
                      ? `rotated ${fmtTime(k.revokedMs)}, replaced by ${k.replacedBy}`
                      : k.revokedMs
                        ? `revoked ${fmtTime(k.revokedMs)}`
                        : 'active'}
                  </td>
                  <td>{k.lastUsedMs ? fmtTime(k.lastUsedMs) : 'never'}</td>
                  <td>
                    {!k.revokedMs && (
                      <span class="actions">
                        <button
                          type="button"
                          aria-label={`Rotate ${k.keyId}`}
                          onClick={() => act(() => post(`/console/api/keys/${k.keyId}/rotate`))}
                        >
                          Rotate
                        </button>
                        <button
                          type="button"
                          class="danger"
                          aria-label={`Revoke ${k.keyId}`}
                          onClick={() =>
                            confirm(`Revoke ${k.prefix}…? Requests with it will fail.`) &&
                            act(() => post(`/console/api/keys/${k.keyId}/revoke`))
                          }
                        >
                          Revoke
                        </button>
                      </span>
                    )}
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
