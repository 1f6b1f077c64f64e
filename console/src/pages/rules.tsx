import { useState } from 'preact/hooks'
import { api, fmtTime, get, pct, post } from '../api'
import { Loading, Page, Problem, ScrollBox, useLoad } from '../ui'
import { CustomRules, type Rule } from './custom-rules'

type Numbers = Record<string, number>
interface Config {
  overrides: { weights: Numbers; thresholds: Numbers; rules?: Rule[] }
  effective: { weights: Numbers; thresholds: Numbers }
  version: number
}
type Verdicts = Record<'allow' | 'review' | 'block', number>
interface Simulation {
  events: number
  changed: number
  transitions: Record<'allow' | 'review' | 'block', Verdicts>
  labelled?: {
    before: Record<'block' | 'review', { precision: number | null; recall: number | null }>
    after: Record<'block' | 'review', { precision: number | null; recall: number | null }>
  }
}
interface Performance {
  rules: {
    reason: string
    fired: number
    fraud: number
    legit: number
    precision: number | null
    precision_low: number | null
    precision_high: number | null
    recall: number | null
    suggested_weight: number | null
  }[]
  window_days: number
  labelled_events: number
}
interface Versions {
  versions: { id: number; createdMs: number; config: unknown }[]
}

const V = ['allow', 'review', 'block'] as const

function NumberTable({
  title,
  section,
  config,
  defaults,
  draft,
  set,
}: {
  title: string
  section: 'weights' | 'thresholds'
  config: Config
  defaults: Numbers
  draft: Numbers
  set: (k: string, v: number) => void
}) {
  return (
    <ScrollBox>
      <table>
        <caption>{title}</caption>
        <thead>
          <tr>
            <th scope="col">Rule</th>
            <th scope="col">Default</th>
            <th scope="col">Current</th>
            <th scope="col">Proposed</th>
          </tr>
        </thead>
        <tbody>
          {Object.keys(config.effective[section]).map((k) => {
            const current = config.effective[section][k]!
            const value = draft[k] ?? current
            return (
              <tr key={k} class={value !== current ? 'changed' : ''}>
                <th scope="row">
                  <code>{k}</code>
                </th>
                <td class="num">{defaults[k] ?? '–'}</td>
                <td class="num">{current}</td>
                <td>
                  <label class="sr-only" for={`${section}-${k}`}>
                    Proposed {section === 'weights' ? 'weight' : 'threshold'} {k}
                  </label>
                  <input
                    id={`${section}-${k}`}
                    type="number"
                    min={0}
                    max={100}
                    step="any"
                    value={value}
                    onInput={(e) => set(k, Number(e.currentTarget.value))}
                  />
                </td>
              </tr>
            )
          })}
        </tbody>
      </table>
    </ScrollBox>
  )
}

function WhatIf({ sim }: { sim: Simulation }) {
  return (
    <div class="card" aria-live="polite">
      <h2>What-if</h2>
      <p class="whatif-summary">
        {sim.changed} of {sim.events} recent events would change verdict.
      </p>
      <table>
        <caption>Verdict now (rows) and with the proposal (columns)</caption>
        <thead>
          <tr>
            <th scope="col">Now</th>
            {V.map((v) => (
              <th key={v} scope="col">
                → {v}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {V.map((from) => (
            <tr key={from}>
              <th scope="row">{from}</th>
              {V.map((to) => (
                <td key={to} class="num">
                  {sim.transitions[from]?.[to] ?? 0}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {sim.labelled && (
        <table>
          <caption>On labelled events</caption>
          <thead>
            <tr>
              <th scope="col">Verdict</th>
              <th scope="col">Precision before</th>
              <th scope="col">Precision after</th>
              <th scope="col">Recall before</th>
              <th scope="col">Recall after</th>
            </tr>
          </thead>
          <tbody>
            {(['block', 'review'] as const).map((v) => (
              <tr key={v}>
                <th scope="row">{v}</th>
                <td class="num">{pct(sim.labelled!.before[v]?.precision)}</td>
                <td class="num">{pct(sim.labelled!.after[v]?.precision)}</td>
                <td class="num">{pct(sim.labelled!.before[v]?.recall)}</td>
                <td class="num">{pct(sim.labelled!.after[v]?.recall)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  )
}

export function RulesPage() {
  const cfg = useLoad(
    () =>
      Promise.all([
        get<Config>('/v1/config'),
        get<{ weights: Numbers; thresholds: Numbers }>('/console/api/defaults'),
      ]),
    [],
  )
  const perf = useLoad(() => get<Performance>('/v1/rules/performance'), [])
  const versions = useLoad(() => get<Versions>('/v1/config/versions?limit=20'), [])
  const [weights, setWeights] = useState<Numbers>({})
  const [thresholds, setThresholds] = useState<Numbers>({})
  const [sim, setSim] = useState<Simulation | null>(null)
  const [failure, setFailure] = useState<Error | null>(null)
  const [status, setStatus] = useState('')

  if (!cfg.data) return cfg.error ? <Problem error={cfg.error} /> : <Loading what="the rules" />
  const [config, defaults] = cfg.data
  const changed = (draft: Numbers, section: 'weights' | 'thresholds') =>
    Object.fromEntries(Object.entries(draft).filter(([k, v]) => config.effective[section][k] !== v))
  const proposal = { weights: changed(weights, 'weights'), thresholds: changed(thresholds, 'thresholds') }
  const dirty = Object.keys(proposal.weights).length + Object.keys(proposal.thresholds).length > 0
  const edit = (set: (f: (d: Numbers) => Numbers) => void) => (k: string, v: number) => {
    set((d) => ({ ...d, [k]: v }))
    setSim(null)
    setStatus('')
  }

  const preview = async () => {
    setFailure(null)
    try {
      setSim(await post<Simulation>('/v1/config/simulate', proposal))
    } catch (e) {
      setFailure(e as Error)
    }
  }
  const save = async () => {
    setFailure(null)
    try {
      await api('PUT', '/v1/config', proposal)
      setWeights({})
      setThresholds({})
      setSim(null)
      setStatus('Saved. New events are scored with this configuration.')
      cfg.reload()
      versions.reload()
    } catch (e) {
      setFailure(e as Error)
    }
  }
  return (
    <Page title="Rules">
      <p>Configuration version {config.version}</p>
      <NumberTable
        title="Weights"
        section="weights"
        config={config}
        defaults={defaults.weights}
        draft={weights}
        set={edit(setWeights)}
      />
      <NumberTable
        title="Thresholds"
        section="thresholds"
        config={config}
        defaults={defaults.thresholds}
        draft={thresholds}
        set={edit(setThresholds)}
      />
      <div class="actions sticky">
        <button type="button" disabled={!dirty} onClick={preview}>
          Preview what-if
        </button>
        <button type="button" disabled={!dirty || sim === null} onClick={save}>
          Save configuration
        </button>
      </div>
      <p role="status">{status}</p>
      <Problem error={failure} />
      {sim && <WhatIf sim={sim} />}
      <CustomRules
        saved={config.overrides.rules ?? []}
        performance={perf.data?.rules ?? []}
        onSaved={() => {
          cfg.reload()
          versions.reload()
        }}
      />
      <h2>Rule performance</h2>
      <Problem error={perf.error} />
      {perf.data && (
        <ScrollBox>
          <table>
            <caption>
              Last {perf.data.window_days} days, {perf.data.labelled_events} labelled events
            </caption>
            <thead>
              <tr>
                <th scope="col">Reason</th>
                <th scope="col">Fired</th>
                <th scope="col">Fraud</th>
                <th scope="col">Legit</th>
                <th scope="col">Precision (95 % interval)</th>
                <th scope="col">Recall</th>
                <th scope="col">Suggested weight</th>
              </tr>
            </thead>
            <tbody>
              {perf.data.rules.map((r) => (
                <tr key={r.reason}>
                  <th scope="row">
                    <code>{r.reason}</code>
                  </th>
                  <td class="num">{r.fired}</td>
                  <td class="num">{r.fraud}</td>
                  <td class="num">{r.legit}</td>
                  <td class="num">
                    {r.precision === null || r.fraud + r.legit === 0
                      ? '–'
                      : `${pct(r.precision)} (${pct(r.precision_low)} – ${pct(r.precision_high)})`}
                  </td>
                  {/* No labelled event fired this code: nothing is known of its recall, not 0 %. */}
                  <td class="num">{r.fraud + r.legit === 0 ? '–' : pct(r.recall)}</td>
                  <td class="num">{r.suggested_weight ?? '–'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
      <h2>Configuration versions</h2>
      <Problem error={versions.error} />
      {versions.data && (
        <ol class="versions">
          {versions.data.versions.map((v) => (
            <li key={String(v.id)}>
              Version {String(v.id)} · {fmtTime(v.createdMs)} UTC
              <details>
                <summary>Configuration</summary>
                <pre>{JSON.stringify(v.config, null, 2)}</pre>
              </details>
            </li>
          ))}
        </ol>
      )}
    </Page>
  )
}
