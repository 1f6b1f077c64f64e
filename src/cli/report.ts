import { parseArgs } from 'node:util'
import { rulesPerformance } from '../services/rules/rules-performance.js'
import type { Store } from '../store/index.js'
import { systemClock } from '../util/clock.js'
import { UsageError } from './errors.js'

type Performance = Awaited<ReturnType<typeof rulesPerformance>>

const HEADERS = ['reason', 'fired', 'fraud', 'legit', 'precision', '95% interval', 'recall', 'weight']

const share = (x: number | null) => (x === null ? '-' : x.toFixed(2))

/** The performance report as an aligned text table, numbers right-aligned, '-' where not yet meaningful. */
export function rulesTable(p: Performance): string {
  const rows = p.rules.map((r) => [
    // A tenant rule's shadow hits are a row of their own beside its enforced ones.
    'shadow' in r && r.shadow ? `${r.reason} (shadow)` : r.reason,
    String(r.fired),
    String(r.fraud),
    String(r.legit),
    share(r.precision),
    r.precision_low === null ? '-' : `${share(r.precision_low)}-${share(r.precision_high)}`,
    share(r.recall),
    r.suggested_weight === null ? '-' : String(r.suggested_weight),
  ])
  const widths = HEADERS.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd()
  const head = `rules over the last ${p.window_days} day(s); ${p.labelled_events} labelled event(s)`
  const body = rows.length ? [line(HEADERS), ...rows.map(line)] : ['no reason code fired in the window']
  return `${[head, ...body].join('\n')}\n`
}

/** `verdict report rules --tenant TENANT_ID [--window-days N] [--json]`. */
export async function reportCommand(
  sub: string | undefined,
  args: string[],
  store: Store,
  write: (text: string) => void,
): Promise<number> {
  if (sub !== 'rules') throw new UsageError(`unknown report command: ${sub ?? '(none)'}`)
  const { values } = parseArgs({
    args,
    options: {
      tenant: { type: 'string' },
      'window-days': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  })
  if (!values.tenant) throw new UsageError('--tenant is required')
  const raw = values['window-days'] ?? '30'
  const days = Number(raw)
  if (!/^\d+$/.test(raw) || days < 1 || days > 365) throw new UsageError('--window-days must be 1-365')
  if (!(await store.tenants.get(values.tenant))) throw new UsageError(`no tenant ${values.tenant}`)
  const p = await rulesPerformance({ store, clock: systemClock }, values.tenant, days)
  write(values.json ? `${JSON.stringify(p)}\n` : rulesTable(p))
  return 0
}
