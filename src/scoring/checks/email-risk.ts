import type { Check, CheckFamily } from '../types.js'

export const emailRisk: CheckFamily = (input) => {
  const e = input.email
  if (!e) return []
  const w = input.config.weights
  const out: Check[] = []
  if (e.isDisposable) {
    out.push({
      check: 'emailRisk',
      key: 'emailDisposable',
      weight: w.emailDisposable,
      reason: 'disposable_email',
      message: 'The email domain belongs to a disposable (throwaway) mail service.',
      evidence: { domain: e.domain },
    })
  }
  if (e.mx === 'none') {
    out.push({
      check: 'emailRisk',
      key: 'emailNoMx',
      weight: w.emailNoMx,
      reason: 'email_no_mx',
      message: 'The email domain has no mail server, so the address cannot receive mail.',
      evidence: { domain: e.domain },
    })
  }
  if (e.looksGibberish) {
    out.push({
      check: 'emailRisk',
      key: 'emailGibberish',
      weight: w.emailGibberish,
      reason: 'gibberish_email',
      message: 'The mailbox name looks machine-generated.',
      evidence: { gibberish_score: Math.round(e.gibberishScore * 1000) / 1000 },
    })
  }
  if (e.hasPlusTag) {
    out.push({
      check: 'emailRisk',
      key: 'emailPlusTag',
      weight: w.emailPlusTag,
      reason: 'plus_addressing',
      message: 'The address uses a +tag, a common way to create many accounts on one mailbox.',
      evidence: {},
    })
  }
  return out
}
