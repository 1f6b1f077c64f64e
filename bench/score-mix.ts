/** A deterministic, realistic mix of score requests: varied IPs, emails and devices, some repeat users. */
const IPS = [
  '73.162.10.20',
  '79.200.1.1',
  '8.8.8.8',
  '24.5.1.1',
  '2003:e1::1',
  '185.220.101.1',
  '52.95.110.1',
  '86.1.2.3',
]
const DOMAINS = [
  'gmail.com',
  'outlook.com',
  'yahoo.com',
  'acme-corp.com',
  'mailinator.com',
  'proton.me',
  'example.org',
]
const LOCALS = ['maria.garcia', 'john.smith', 'xkqzvbwp', 'li.wei', 'ana+promo', 'k.tanaka', 'p.novak']
const ZONES = ['America/New_York', 'Europe/Berlin', 'Asia/Tokyo', 'Europe/London']

export function scoreBodies(count: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = []
  let x = 12345
  const rnd = (n: number) => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0
    return x % n
  }
  for (let i = 0; i < count; i++) {
    const user = rnd(4) === 0 ? `user-${rnd(50)}` : `user-${i}`
    const ip =
      rnd(3) === 0 ? IPS[rnd(IPS.length)]! : `${20 + rnd(180)}.${rnd(255)}.${rnd(255)}.${1 + rnd(250)}`
    const body: Record<string, unknown> = {
      event: ['signup', 'login', 'checkout'][rnd(3)],
      user_id: user,
      ip,
      email: `${LOCALS[rnd(LOCALS.length)]}${rnd(1000)}@${DOMAINS[rnd(DOMAINS.length)]}`,
      device_id: `fp-${rnd(2000)}`,
      event_country: ['US', 'DE', 'GB'][rnd(3)],
      timezone: ZONES[rnd(ZONES.length)],
    }
    if (rnd(10) === 0) body['device'] = { is_headless: true }
    out.push(body)
  }
  return out
}
