import { useState } from 'preact/hooks'
import { api, HttpError, post } from '../api'
import { Field, Problem, ScrollBox } from '../ui'

/** A tenant rule as /v1/config holds it (docs/rules.md). */
export interface Rule {
  id: string
  description?: string
  when: string
  then: { score: number } | { verdict: 'allow' | 'review' | 'block' }
  mode: 'enforce' | 'shadow' | 'off'
  rollout: number
}
interface RuleFires {
  rules?: { id: string; mode: string; fired: number }[]
  events: number
}
/** A rule's row of /v1/rules/performance, when it has fired on labelled events. */
export interface RulePerformance {
  reason: string
  fired: number
  precision: number | null
}

const EMPTY: Rule = { id: '', when: '', then: { score: 20 }, mode: 'shadow', rollout: 100 }
const effect = (r: Rule) =>
  'score' in r.then ? `score ${r.then.score > 0 ? '+' : ''}${r.then.score}` : `verdict ${r.then.verdict}`

/**
 * Where the server's refusal points: `rules[2] (odd): no such overload … at position 4` names the rule by
 * its index in the list that was sent. Null when the message names no rule.
 */
function refusedRule(e: unknown): { index: number; message: string } | null {
  if (!(e instanceof HttpError)) return null
  const m = /rules\[(\d+)\]/.exec(e.message)
  return m ? { index: Number(m[1]), message: e.message } : null
}

function RuleForm({
  initial,
  onDone,
  onCancel,
}: {
  initial: Rule
  onDone: (r: Rule) => void
  onCancel: () => void
}) {
  const [r, setR] = useState<Rule>(initial)
  const kind = 'score' in r.then ? 'score' : 'verdict'
  const set = (patch: Partial<Rule>) => setR((x) => ({ ...x, ...patch }))
  return (
    <form
      class="card rule-form"
      onSubmit={(e) => {
        e.preventDefault()
        onDone(r)
      }}
    >
      <Field label="Rule id" id="rule-id">
        <input
          id="rule-id"
          required
          pattern="[a-z][a-z0-9_]{0,39}"
          value={r.id}
          onInput={(e) => set({ id: e.currentTarget.value })}
        />
      </Field>
      <Field label="Description" id="rule-description">
        <input
          id="rule-description"
          maxLength={200}
          value={r.description ?? ''}
          onInput={(e) => set({ description: e.currentTarget.value || undefined })}
        />
      </Field>
      <Field label="Condition (CEL)" id="rule-when">
        <textarea
          id="rule-when"
          required
          rows={3}
          maxLength={2000}
          value={r.when}
          onInput={(e) => set({ when: e.currentTarget.value })}
        />
      </Field>
      <Field label="Effect" id="rule-kind">
        <select
          id="rule-kind"
          value={kind}
          onChange={(e) =>
            set({ then: e.currentTarget.value === 'score' ? { score: 20 } : { verdict: 'review' } })
          }
        >
          <option value="score">Add to the score</option>
          <option value="verdict">Set a verdict</option>
        </select>
      </Field>
      {'score' in r.then ? (
        <Field label="Points" id="rule-score">
          <input
            id="rule-score"
            type="number"
            min={-100}
            max={100}
            required
            value={r.then.score}
            onInput={(e) => set({ then: { score: Math.trunc(Number(e.currentTarget.value)) } })}
          />
        </Field>
      ) : (
        <Field label="Verdict" id="rule-verdict">
          <select
            id="rule-verdict"
            value={r.then.verdict}
            onChange={(e) =>
              set({ then: { verdict: e.currentTarget.value as 'allow' | 'review' | 'block' } })
            }
          >
            <option value="review">review</option>
            <option value="block">block</option>
            <option value="allow">allow</option>
          </select>
        </Field>
      )}
      <Field label="Mode" id="rule-mode">
        <select
          id="rule-mode"
          value={r.mode}
          onChange={(e) => set({ mode: e.currentTarget.value as Rule['mode'] })}
        >
          <option value="shadow">shadow (recorded, never decides)</option>
          <option value="enforce">enforce</option>
          <option value="off">off</option>
        </select>
      </Field>
      <Field label="Rollout (%)" id="rule-rollout">
        <input
          id="rule-rollout"
          type="number"
          min={0}
          max={100}
          required
          value={r.rollout}
          onInput={(e) => set({ rollout: Math.trunc(Number(e.currentTarget.value)) })}
        />
      </Field>
      <div class="actions">
        <button type="submit">Keep this rule</button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  )
}

/**
 * The tenant's own rules: listed with mode and rollout, edited in a draft, previewed with the what-if
 * (how often each would have fired) and saved as one list. A refusal is shown at the rule it names.
 */
export function CustomRules({
  saved,
  performance,
  onSaved,
}: {
  saved: Rule[]
  performance: RulePerformance[]
  onSaved: () => void
}) {
  const [draft, setDraft] = useState<Rule[] | null>(null)
  const [editing, setEditing] = useState<number | 'new' | null>(null)
  const [fires, setFires] = useState<RuleFires | null>(null)
  const [refusal, setRefusal] = useState<{ index: number; message: string } | null>(null)
  const [failure, setFailure] = useState<Error | null>(null)
  const [status, setStatus] = useState('')
  const rules = draft ?? saved
  const change = (next: Rule[]) => {
    setDraft(next)
    setFires(null)
    setRefusal(null)
    setFailure(null)
    setStatus('')
  }
  const fail = (e: unknown) => {
    const at = refusedRule(e)
    if (at) setRefusal(at)
    else setFailure(e as Error)
  }
  const preview = async () => {
    setRefusal(null)
    setFailure(null)
    try {
      setFires(await post<RuleFires>('/v1/config/simulate', { rules }))
    } catch (e) {
      fail(e)
    }
  }
  const save = async () => {
    setRefusal(null)
    setFailure(null)
    try {
      await api('PUT', '/v1/config', { rules })
      setDraft(null)
      setFires(null)
      setStatus('Rules saved. New events are decided with them.')
      onSaved()
    } catch (e) {
      fail(e)
    }
  }
  const perf = new Map(performance.map((p) => [p.reason, p]))
  const fired = new Map((fires?.rules ?? []).map((f) => [f.id, f.fired]))
  return (
    <div class="custom-rules">
      <h2>Your rules</h2>
      {rules.length === 0 && (
        <p>No rules yet. A rule adds points or sets a verdict when its CEL condition holds.</p>
      )}
      {rules.length > 0 && (
        <ScrollBox>
          <table>
            <caption>{draft ? 'Draft (not saved)' : 'Saved rules'}</caption>
            <thead>
              <tr>
                <th scope="col">Rule</th>
                <th scope="col">Condition</th>
                <th scope="col">Effect</th>
                <th scope="col">Mode</th>
                <th scope="col">Rollout</th>
                <th scope="col">Would fire</th>
                <th scope="col">Precision</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {rules.map((r, i) => {
                const p = perf.get(`rule:${r.id}`)
                return (
                  <tr key={r.id || i} class={refusal?.index === i ? 'refused' : ''} data-rule={r.id}>
                    <th scope="row">
                      <code>{r.id}</code>
                      {r.description && <div class="muted">{r.description}</div>}
                    </th>
                    <td>
                      <code>{r.when}</code>
                      {refusal?.index === i && (
                        <p class="problem" role="alert">
                          {refusal.message}
                        </p>
                      )}
                    </td>
                    <td>{effect(r)}</td>
                    <td>{r.mode}</td>
                    <td class="num">{r.rollout} %</td>
                    <td class="num">{fired.has(r.id) ? `${fired.get(r.id)} of ${fires!.events}` : '–'}</td>
                    <td class="num">
                      {p?.precision === null || p?.precision === undefined
                        ? '–'
                        : `${(p.precision * 100).toFixed(1)} %`}
                    </td>
                    <td>
                      <button type="button" onClick={() => setEditing(i)} aria-label={`Edit ${r.id}`}>
                        Edit
                      </button>
                      {r.mode === 'shadow' && (
                        <button
                          type="button"
                          aria-label={`Promote ${r.id} to enforce`}
                          onClick={() =>
                            change(rules.map((x, k) => (k === i ? { ...x, mode: 'enforce' } : x)))
                          }
                        >
                          Promote
                        </button>
                      )}
                      <button
                        type="button"
                        aria-label={`Remove ${r.id}`}
                        onClick={() => change(rules.filter((_, k) => k !== i))}
                      >
                        Remove
                      </button>
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </ScrollBox>
      )}
      {editing !== null ? (
        <RuleForm
          initial={editing === 'new' ? EMPTY : rules[editing]!}
          onCancel={() => setEditing(null)}
          onDone={(r) => {
            change(editing === 'new' ? [...rules, r] : rules.map((x, k) => (k === editing ? r : x)))
            setEditing(null)
          }}
        />
      ) : (
        <div class="actions">
          <button type="button" onClick={() => setEditing('new')}>
            Add a rule
          </button>
          <button type="button" disabled={draft === null} onClick={preview}>
            Preview rules
          </button>
          <button type="button" disabled={draft === null} onClick={save}>
            Save rules
          </button>
          {draft !== null && (
            <button
              type="button"
              onClick={() => {
                change(saved)
                setDraft(null)
              }}
            >
              Discard draft
            </button>
          )}
        </div>
      )}
      <p role="status">{status}</p>
      <Problem error={failure} />
      {fires && (
        <p class="whatif-summary" aria-live="polite">
          Previewed on {fires.events} recent events.
        </p>
      )}
    </div>
  )
}
