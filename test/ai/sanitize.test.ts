import { describe, expect, it } from 'vitest'
import { sanitizeExplanation } from '../../src/ai/sanitize.js'

const ok = (text: string) => ({ ok: true, text })
const no = (reason: string) => ({ ok: false, reason })

describe('sanitizeExplanation', () => {
  it('keeps plain prose as it is', () => {
    const text =
      'The event was blocked because the connection came from a hosting network. Two weaker signals agreed.'
    expect(sanitizeExplanation(text)).toEqual(ok(text))
  })

  it('strips markdown, quotes, control and invisible characters, and collapses whitespace', () => {
    const raw =
      '"## Summary\n- **Blocked**: the\u0007 connection\u200b came from a `hosting` network.\r\n\n> Nothing else fired."'
    expect(sanitizeExplanation(raw)).toEqual(
      ok('Summary Blocked: the connection came from a hosting network. Nothing else fired.'),
    )
  })

  it('drops an unfinished last sentence left by the token limit', () => {
    expect(
      sanitizeExplanation('The connection came from a hosting network. The email address also bel'),
    ).toEqual(ok('The connection came from a hosting network.'))
  })

  it('bounds the length, at a sentence end when there is one', () => {
    const s = 'Several independent signals point to automated traffic from a hosting provider. '
    const out = sanitizeExplanation(s.repeat(12), 300)
    expect(out.ok && out.text.length <= 300 && out.text.endsWith('provider.')).toBe(true)
    const word = sanitizeExplanation(`${'many words here '.repeat(40)}end`, 100)
    expect(word.ok && word.text.length <= 101 && word.text.endsWith('…')).toBe(true)
  })

  it.each([
    ['', 'empty_output'],
    ['  \n\t ', 'empty_output'],
    ["I'm sorry, but I can't help with that.", 'refusal'],
    ['I cannot provide an explanation for this decision.', 'refusal'],
    ['As an AI language model I do not judge fraud events at all.', 'refusal'],
    ['The user bob@example.com signed up from a hosting network.', 'identifier_in_output'],
    ['The user bob＠example.com signed up from a hosting network.', 'identifier_in_output'],
    ['Traffic from 198.51.100.23 looked automated across many accounts.', 'identifier_in_output'],
    ['Traffic from 2001:db8::1 looked automated across many accounts.', 'identifier_in_output'],
    ['The phone +1 415 555 0123 was used by many different accounts.', 'identifier_in_output'],
    ['Many sign-ups came through shop.example.org in a short window today.', 'identifier_in_output'],
    ['This looks like a false positive and the customer seems fine overall.', 'questions_verdict'],
    ['The event should have been allowed given how weak the signals are.', 'questions_verdict'],
    ['{"explanation": "blocked for hosting network use by this client"}', 'garbage_output'],
    ['<p>Blocked because of hosting network and more signals here</p>', 'garbage_output'],
    ['Blocked.', 'garbage_output'],
    ['The signals are weak, so this event could safely be allowed by an analyst.', 'questions_verdict'],
  ])('rejects %j as %s', (raw, reason) => {
    expect(sanitizeExplanation(raw)).toEqual(no(reason))
  })

  it('accepts a note that an event awaits review', () => {
    const text = 'The event should be reviewed by an analyst because many accounts used one connection.'
    expect(sanitizeExplanation(text)).toEqual(ok(text))
  })

  it('rejects a non-string', () => {
    expect(sanitizeExplanation(null)).toEqual(no('bad_response'))
  })
})
