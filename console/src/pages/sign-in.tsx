import { useState } from 'preact/hooks'
import { post, type Session } from '../api'
import { Field } from '../ui'

export function SignIn({ notice, onSignedIn }: { notice: string; onSignedIn: (s: Session) => void }) {
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)
  const submit = async (e: Event) => {
    e.preventDefault()
    setBusy(true)
    setError('')
    try {
      onSignedIn(await post<Session>('/console/api/sign-in', { email, password }))
    } catch (err) {
      setError((err as Error).message)
    } finally {
      setBusy(false)
    }
  }
  return (
    <main id="main" class="sign-in">
      <h1 id="page-title" tabIndex={-1}>
        Sign in to verdict
      </h1>
      {notice && !error && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <form onSubmit={submit}>
        <Field label="Email" id="email">
          <input
            id="email"
            type="email"
            autocomplete="username"
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </Field>
        <Field label="Password" id="password">
          <input
            id="password"
            type="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </Field>
        {error && (
          <p class="problem" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  )
}
