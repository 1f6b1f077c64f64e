import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { get, type HttpError, onExpired, post, type Session, useSession } from './api'
import { CheckerPage } from './pages/checker'
import { EventPage, EventsPage } from './pages/events'
import { KeysPage } from './pages/keys'
import { ListsPage } from './pages/lists'
import { OverviewPage } from './pages/overview'
import { PrivacyPage } from './pages/privacy'
import { ReviewPage } from './pages/review'
import { RulesPage } from './pages/rules'
import { SignIn } from './pages/sign-in'
import { WebhookDeliveriesPage, WebhooksPage } from './pages/webhooks'

const NAV: [string, string][] = [
  ['overview', 'Overview'],
  ['events', 'Events'],
  ['review', 'Review queue'],
  ['checker', 'Checker'],
  ['lists', 'Lists'],
  ['rules', 'Rules'],
  ['keys', 'Keys'],
  ['webhooks', 'Webhooks'],
  ['privacy', 'Privacy'],
]

/** `#/events/ev_1?x=1` → ['events', 'ev_1'] and its query. */
function parseHash(): { parts: string[]; params: URLSearchParams } {
  const raw = location.hash.replace(/^#\/?/, '')
  const [path = '', q = ''] = raw.split('?')
  return { parts: path.split('/').filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(q) }
}

function useRoute() {
  const [route, setRoute] = useState(parseHash)
  useEffect(() => {
    const on = () => setRoute(parseHash())
    addEventListener('hashchange', on)
    return () => removeEventListener('hashchange', on)
  }, [])
  return route
}

function Screen({ parts, params }: { parts: string[]; params: URLSearchParams }) {
  const [page, id] = parts
  if (page === 'events' && id) return <EventPage id={id} />
  if (page === 'events') return <EventsPage params={params} />
  if (page === 'review') return <ReviewPage />
  if (page === 'checker') return <CheckerPage />
  if (page === 'lists') return <ListsPage />
  if (page === 'rules') return <RulesPage />
  if (page === 'keys') return <KeysPage />
  if (page === 'webhooks' && id) return <WebhookDeliveriesPage id={id} />
  if (page === 'webhooks') return <WebhooksPage />
  if (page === 'privacy') return <PrivacyPage />
  return <OverviewPage />
}

function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined)
  const [notice, setNotice] = useState('')
  const [menu, setMenu] = useState(false)
  const route = useRoute()

  useEffect(() => {
    onExpired(() => {
      useSession(null)
      setSession(null)
      setNotice('Your session has ended. Sign in again.')
    })
    get<Session>('/console/api/session').then(
      (s) => {
        useSession(s)
        setSession(s)
      },
      (e: HttpError) => {
        setSession(null)
        if (e.status !== 401) setNotice(e.message)
      },
    )
  }, [])

  useEffect(() => {
    setMenu(false)
    document.getElementById('page-title')?.focus()
  }, [route.parts.join('/')])

  if (session === undefined) return <p aria-live="polite">Loading…</p>
  if (session === null)
    return (
      <SignIn
        notice={notice}
        onSignedIn={(s) => {
          useSession(s)
          setNotice('')
          setSession(s)
        }}
      />
    )

  const signOut = async () => {
    await post('/console/api/sign-out').catch(() => {})
    useSession(null)
    setSession(null)
    setNotice('You signed out.')
  }
  const current = route.parts[0] ?? 'overview'
  return (
    <>
      <button type="button" class="skip" onClick={() => document.getElementById('page-title')?.focus()}>
        Skip to content
      </button>
      <header class="top">
        <span class="brand">verdict</span>
        <span class="tenant" title="tenant">
          {session.tenantName}
        </span>
        <button
          type="button"
          class="menu"
          aria-expanded={menu}
          aria-controls="nav"
          onClick={() => setMenu(!menu)}
        >
          Menu
        </button>
        <nav id="nav" class={menu ? 'open' : ''} aria-label="Console">
          <ul>
            {NAV.map(([path, label]) => (
              <li key={path}>
                <a
                  href={`#/${path}`}
                  aria-current={current === path ? 'page' : undefined}
                  onClick={() => setMenu(false)}
                >
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who">{session.email}</span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main">
        <Screen parts={route.parts} params={route.params} />
      </main>
    </>
  )
}

render(<App />, document.getElementById('app')!)
