import { useState } from 'preact/hooks'
import { get, post } from '../api'
import { Field, Page, Problem } from '../ui'

type Kind = 'email' | 'ip' | 'phone'

const scalar = (v: unknown): string =>
  v === null || v === undefined
    ? '–'
    : Array.isArray(v)
      ? v.map((x) => (typeof x === 'object' ? JSON.stringify(x) : String(x))).join(', ') || '–'
      : typeof v === 'object'
        ? JSON.stringify(v)
        : String(v)

/** Every field of a check response: one titled list per object (`email`, `reputation`, …). */
function Fields({ value }: { value: Record<string, unknown> }) {
  const entries = Object.entries(value)
  const plain = entries.filter(([, v]) => v === null || typeof v !== 'object' || Array.isArray(v))
  const nested = entries.filter(([, v]) => v !== null && typeof v === 'object' && !Array.isArray(v))
  return (
    <>
      {nested.map(([k, v]) => (
        <section key={k} class="fieldset">
          <h3>{k}</h3>
          <Fields value={v as Record<string, unknown>} />
        </section>
      ))}
      {plain.length > 0 && (
        <dl class="fields">
          {plain.map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{scalar(v)}</dd>
            </div>
          ))}
        </dl>
      )}
    </>
  )
}

function CheckForm({ kind, label, type }: { kind: Kind; label: string; type: 'email' | 'text' | 'tel' }) {
  const [value, setValue] = useState('')
  // Phones: the country a national-format number belongs to (ISO 3166 alpha-2), optional.
  const [country, setCountry] = useState('')
  const [result, setResult] = useState<unknown>(null)
  const [error, setError] = useState<Error | null>(null)
  const run = async (v = value) => {
    setError(null)
    try {
      const c = country.trim().toUpperCase()
      setResult(
        await post(`/v1/check/${kind}`, {
          [kind]: v.trim(),
          ...(kind === 'phone' && c ? { country: c } : {}),
        }),
      )
    } catch (e) {
      setError(e as Error)
    }
  }
  return (
    <form
      class="card"
      aria-label={`Check ${label}`}
      onSubmit={(e) => {
        e.preventDefault()
        void run()
      }}
    >
      <h2>{label}</h2>
      <Field label={label} id={`check-${kind}`}>
        <input
          id={`check-${kind}`}
          {...({ type } as { type: 'text' })}
          required
          value={value}
          onInput={(e) => setValue(e.currentTarget.value)}
        />
      </Field>
      {kind === 'phone' && (
        <Field label="Country (for national numbers, e.g. GB)" id="check-phone-country">
          <input
            id="check-phone-country"
            maxLength={2}
            pattern="[A-Za-z]{2}"
            autoComplete="country"
            value={country}
            onInput={(e) => setCountry(e.currentTarget.value)}
          />
        </Field>
      )}
      <div class="actions">
        <button type="submit">Check {label.toLowerCase()}</button>
        {kind === 'ip' && (
          <button
            type="button"
            onClick={async () => {
              const me = await get<{ ip: string }>('/v1/ip')
              setValue(me.ip)
              await run(me.ip)
            }}
          >
            Use my IP
          </button>
        )}
      </div>
      <Problem error={error} />
      {result !== null && (
        <div class="result" aria-live="polite">
          {typeof (result as { summary?: string }).summary === 'string' && (
            <p class="summary">{(result as { summary: string }).summary}</p>
          )}
          <Fields value={result as Record<string, unknown>} />
        </div>
      )}
    </form>
  )
}

export function CheckerPage() {
  return (
    <Page title="Checker">
      <div class="grid">
        <CheckForm kind="email" label="Email" type="email" />
        <CheckForm kind="ip" label="IP address" type="text" />
        <CheckForm kind="phone" label="Phone" type="tel" />
      </div>
    </Page>
  )
}
