import type { Check, CheckFamily } from '../types.js'
import { fire } from './fire.js'

export const emailRisk: CheckFamily = (input) => {
  const e = input.email
  if (!e) return []
  const w = input.config.weights
  const out: Check[] = []
  if (e.relay) {
    out.push(
      fire('email_relay', {
        key: 'emailRelay',
        weight: w.emailRelay,
        message: `The address is an alias of an e-mail relay service (${e.relay}) that forwards to a real mailbox.`,
        evidence: { domain: e.domain, service: e.relay },
      }),
    )
  }
  if (e.isDisposable) {
    out.push(
      fire('disposable_email', {
        key: 'emailDisposable',
        weight: w.emailDisposable,
        message: 'The email domain belongs to a disposable (throwaway) mail service.',
        evidence: { domain: e.domain },
      }),
    )
  }
  if (e.mx === 'none') {
    out.push(
      fire('email_no_mx', {
        key: 'emailNoMx',
        weight: w.emailNoMx,
        message: 'The email domain has no mail server, so the address cannot receive mail.',
        evidence: { domain: e.domain },
      }),
    )
  }
  if (e.looksGibberish) {
    out.push(
      fire('gibberish_email', {
        key: 'emailGibberish',
        weight: w.emailGibberish,
        message: 'The mailbox name looks machine-generated.',
        evidence: { gibberish_score: Math.round(e.gibberishScore * 1000) / 1000 },
      }),
    )
  }
  if (e.hasPlusTag) {
    out.push(
      fire('plus_addressing', {
        key: 'emailPlusTag',
        weight: w.emailPlusTag,
        message: 'The address uses a +tag, a common way to create many accounts on one mailbox.',
        evidence: {},
      }),
    )
  }
  return out
}
