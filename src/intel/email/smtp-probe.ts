import { connect } from 'node:net'
import { specialPurpose } from '../ip/special-purpose.js'

export type RcptOutcome = 'accepted' | 'rejected' | 'unknown'

export interface RcptProbeResult {
  outcome: RcptOutcome
  /** Reply code to RCPT TO, when the dialogue got that far. */
  code: number | null
  /** Short machine-readable why, e.g. `rcpt_250`, `timeout`, `banner_554`, `connect_error`. */
  reason: string
}

export interface RcptProbeOptions {
  address: string
  port: number
  timeoutMs: number
  heloName: string
  recipient: string
}

const MAX_REPLY_BYTES = 64 * 1024
// Mailbox-level refusals: the server says this recipient does not exist. Other 5xx codes (554 policy
// blocks, 530 authentication required, …) say nothing about the recipient, so they stay unknown.
const MAILBOX_REFUSED = new Set([550, 551, 553])

/**
 * Asks one SMTP server whether it would take mail for `recipient`, without sending any: banner, EHLO
 * (HELO if EHLO is refused), MAIL FROM:<>, RCPT TO, then QUIT. The whole dialogue is bounded by timeoutMs.
 */
export function probeRecipient(opts: RcptProbeOptions): Promise<RcptProbeResult> {
  return new Promise((resolve) => {
    const socket = connect({ host: opts.address, port: opts.port })
    socket.setEncoding('latin1')
    let stage: 'banner' | 'ehlo' | 'helo' | 'mail' | 'rcpt' | 'quit' = 'banner'
    let buffer = ''
    let result: RcptProbeResult | null = null
    let done = false

    const finish = (r: RcptProbeResult): void => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      resolve(r)
    }
    const unknown = (reason: string): RcptProbeResult => ({ outcome: 'unknown', code: null, reason })
    const timer = setTimeout(() => finish(result ?? unknown('timeout')), opts.timeoutMs)
    const send = (line: string): void => {
      socket.write(`${line}\r\n`)
    }
    const quit = (r: RcptProbeResult): void => {
      // Say goodbye properly, then wait for the 221 (or the close) before reporting.
      result = r
      stage = 'quit'
      send('QUIT')
    }

    // Advances the dialogue by one complete reply.
    const onReply = (code: number): void => {
      if (stage === 'banner') {
        if (code !== 220) quit(unknown(`banner_${code}`))
        else {
          stage = 'ehlo'
          send(`EHLO ${opts.heloName}`)
        }
      } else if (stage === 'ehlo' || stage === 'helo') {
        if (code === 250) {
          stage = 'mail'
          send('MAIL FROM:<>')
        } else if (stage === 'ehlo' && code >= 500) {
          stage = 'helo'
          send(`HELO ${opts.heloName}`)
        } else quit(unknown(`${stage}_${code}`))
      } else if (stage === 'mail') {
        if (code !== 250) quit(unknown(`mail_${code}`))
        else {
          stage = 'rcpt'
          send(`RCPT TO:<${opts.recipient}>`)
        }
      } else if (stage === 'rcpt') {
        const outcome: RcptOutcome =
          code === 250 || code === 251 ? 'accepted' : MAILBOX_REFUSED.has(code) ? 'rejected' : 'unknown'
        quit({ outcome, code, reason: `rcpt_${code}` })
      } else {
        finish(result ?? unknown('quit'))
      }
    }

    socket.on('data', (chunk: string) => {
      buffer += chunk
      if (buffer.length > MAX_REPLY_BYTES) {
        finish(unknown('reply_too_long'))
        return
      }
      for (;;) {
        const eol = buffer.indexOf('\n')
        if (eol < 0) return
        const line = buffer.slice(0, eol).replace(/\r$/, '')
        buffer = buffer.slice(eol + 1)
        const m = /^(\d{3})([ -]|$)/.exec(line)
        if (!m) {
          quit(unknown('protocol_error'))
          return
        }
        // "250-..." lines continue a multi-line reply; only the last line ("250 ...") completes it.
        if (m[2] === '-') continue
        onReply(Number(m[1]))
        if (done) return
      }
    })
    socket.on('error', () =>
      finish(result ?? unknown(stage === 'banner' ? 'connect_error' : 'network_error')),
    )
    socket.on('close', () => finish(result ?? unknown('closed')))
  })
}

/**
 * Whether the probe may connect to this address: only ordinary public unicast hosts. A domain's MX can
 * point anywhere, so without this check a caller could make the probe knock on internal hosts, or
 * reach them through a translator (NAT64, 6to4, Teredo) or an IPv4-mapped form.
 */
export function isProbeRefused(address: string): boolean {
  return specialPurpose(address) !== null
}
