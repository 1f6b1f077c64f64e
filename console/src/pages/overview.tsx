import { get, pct } from '../api'
import { Loading, Page, Problem, ScrollBox, useLoad } from '../ui'

interface Hour {
  hourMs: number
  allow: number
  review: number
  block: number
}
interface Overview {
  stats: {
    total: number
    verdicts: Record<'allow' | 'review' | 'block', { count: number }>
    topReasons: { reason: string; count: number }[]
  }
  hourly: Hour[]
  quota: { period: string; used: number; limit: number }
}

const KINDS = ['allow', 'review', 'block'] as const

/**
 * Stacked bars in plain SVG: a day of hourly counts needs no chart library, and SVG is part of the
 * page for screen readers (a table of the same figures follows it).
 */
function HourlyChart({ hours }: { hours: Hour[] }) {
  const W = 720
  const H = 200
  const max = Math.max(1, ...hours.map((h) => h.allow + h.review + h.block))
  const bw = W / Math.max(1, hours.length)
  return (
    <svg class="chart" viewBox={`0 0 ${W} ${H + 20}`} role="img" aria-labelledby="chart-title">
      <title id="chart-title">
        Events per hour by verdict, last {hours.length} hours; the most in one hour: {max}
      </title>
      {hours.map((h, i) => {
        let y = H
        return (
          <g key={h.hourMs}>
            {KINDS.map((k) => {
              const height = (h[k] / max) * (H - 10)
              y -= height
              return height > 0 ? (
                <rect
                  key={k}
                  class={`bar-${k}`}
                  x={i * bw + 1}
                  y={y}
                  width={Math.max(1, bw - 2)}
                  height={height}
                />
              ) : null
            })}
            {i % 6 === 0 && (
              <text x={i * bw} y={H + 15} class="axis">
                {new Date(h.hourMs).toISOString().slice(11, 16)}
              </text>
            )}
          </g>
        )
      })}
    </svg>
  )
}

export function OverviewPage() {
  const { data, error } = useLoad(() => get<Overview>('/console/api/overview?hours=24'), [])
  return (
    <Page title="Overview">
      <Problem error={error} />
      {!data && !error && <Loading what="the overview" />}
      {data && (
        <>
          <div class="tiles">
            <div class="tile">
              <span class="big">{data.stats.total}</span> events, last 24 h
            </div>
            <div class="tile">
              <span class="big">
                {pct(data.stats.total ? data.stats.verdicts.block.count / data.stats.total : null)}
              </span>{' '}
              blocked
            </div>
            <div class="tile">
              <span class="big">
                {pct(data.stats.total ? data.stats.verdicts.review.count / data.stats.total : null)}
              </span>{' '}
              to review
            </div>
            <div class="tile">
              <span class="big">{pct(data.quota.limit ? data.quota.used / data.quota.limit : null)}</span> of
              the monthly quota ({data.quota.used} / {data.quota.limit}, {data.quota.period})
            </div>
          </div>
          <h2>Events per hour</h2>
          <p class="legend">
            {KINDS.map((k) => (
              <span key={k} class={`key key-${k}`}>
                {k}
              </span>
            ))}
          </p>
          <HourlyChart hours={data.hourly} />
          <details>
            <summary>The same figures as a table</summary>
            <ScrollBox>
              <table>
                <caption class="sr-only">Events per hour by verdict</caption>
                <thead>
                  <tr>
                    <th scope="col">Hour (UTC)</th>
                    {KINDS.map((k) => (
                      <th key={k} scope="col">
                        {k}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {data.hourly.map((h) => (
                    <tr key={h.hourMs}>
                      <td>{new Date(h.hourMs).toISOString().slice(0, 13).replace('T', ' ')}h</td>
                      {KINDS.map((k) => (
                        <td key={k} class="num">
                          {h[k]}
                        </td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollBox>
          </details>
          <h2>Top reasons</h2>
          {data.stats.topReasons.length === 0 ? (
            <p>No reason fired in the last 24 hours.</p>
          ) : (
            <ol class="reasons">
              {data.stats.topReasons.map((r) => (
                <li key={r.reason}>
                  <a href={`#/events?reason=${encodeURIComponent(r.reason)}`}>
                    <code>{r.reason}</code>
                  </a>{' '}
                  {r.count}
                </li>
              ))}
            </ol>
          )}
        </>
      )}
    </Page>
  )
}
