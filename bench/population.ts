/**
 * A deterministic population for the history mode: people with their own account id, email, device
 * fingerprint and residential address (each stable per person, several events each over the feed),
 * plus a few farm devices that sign up a new throwaway account on almost every event.
 */

/** mulberry32: small, seeded, and its low bits are as good as its high ones. */
export function prng(seed: number): (n: number) => number {
  let s = seed >>> 0
  return (n) => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n)
  }
}

interface Region {
  country: string
  weight: number
  zones: string[]
  /** /16 networks of consumer ISPs (cable, DSL, fibre) in that country, checked against the IP data. */
  nets: string[]
  mail: string[]
}

const REGIONS: Region[] = [
  {
    country: 'US',
    weight: 40,
    zones: ['America/New_York', 'America/Chicago', 'America/Denver', 'America/Los_Angeles'],
    nets: ['73.0', '73.11', '73.22', '24.0', '24.11', '24.22', '71.11', '71.66', '71.77', '76.22', '76.33'],
    mail: ['gmail.com', 'yahoo.com', 'outlook.com', 'icloud.com', 'hotmail.com', 'aol.com', 'comcast.net'],
  },
  {
    country: 'DE',
    weight: 15,
    zones: ['Europe/Berlin'],
    nets: ['79.198', '79.209', '79.220', '87.132', '87.143', '87.154', '91.0', '91.11', '93.198'],
    mail: ['gmail.com', 'gmx.de', 'web.de', 't-online.de', 'outlook.de'],
  },
  {
    country: 'GB',
    weight: 15,
    zones: ['Europe/London'],
    nets: ['86.0', '86.11', '86.22', '81.77', '81.99', '81.110', '82.0', '82.11', '90.198', '90.209'],
    mail: ['gmail.com', 'hotmail.co.uk', 'btinternet.com', 'yahoo.co.uk', 'outlook.com'],
  },
  {
    country: 'FR',
    weight: 10,
    zones: ['Europe/Paris'],
    nets: ['90.0', '90.11', '90.22', '88.121', '88.165', '176.132', '176.143', '77.132', '77.154'],
    mail: ['gmail.com', 'orange.fr', 'free.fr', 'laposte.net', 'hotmail.fr'],
  },
  {
    country: 'BR',
    weight: 10,
    zones: ['America/Sao_Paulo'],
    nets: ['177.33', '177.77', '177.99', '200.209', '200.231', '201.0', '201.22', '201.44'],
    mail: ['gmail.com', 'hotmail.com', 'uol.com.br', 'bol.com.br', 'outlook.com'],
  },
  {
    country: 'JP',
    weight: 10,
    zones: ['Asia/Tokyo'],
    nets: ['60.33', '60.44', '60.66', '180.0', '180.11', '180.22', '114.22', '114.154'],
    mail: ['gmail.com', 'yahoo.co.jp', 'docomo.ne.jp', 'icloud.com', 'outlook.jp'],
  },
]

const FIRST = [
  'maria',
  'james',
  'anna',
  'li',
  'mohammed',
  'sofia',
  'lucas',
  'emma',
  'noah',
  'yuki',
  'hannah',
  'pedro',
  'chloe',
  'oliver',
  'mia',
  'leon',
  'camille',
  'hiro',
  'ana',
  'david',
  'sarah',
  'thomas',
  'julia',
  'daniel',
  'laura',
  'kenji',
  'fatima',
  'jonas',
  'grace',
  'mateo',
  'elena',
  'samuel',
]
const LAST = [
  'garcia',
  'smith',
  'mueller',
  'wang',
  'khan',
  'rossi',
  'silva',
  'martin',
  'brown',
  'tanaka',
  'schmidt',
  'dubois',
  'jones',
  'santos',
  'taylor',
  'weber',
  'moreau',
  'sato',
  'wilson',
  'costa',
  'fischer',
  'bernard',
  'evans',
  'oliveira',
  'walker',
  'suzuki',
  'becker',
  'laurent',
  'clark',
  'lima',
]

export type ScoreRow = Record<string, unknown>

interface Person {
  user: string
  email: string
  fp: string
  ip: string
  zone: string
  country: string
}

const ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789'

function chars(rnd: (n: number) => number, alphabet: string, len: number): string {
  let s = ''
  for (let i = 0; i < len; i++) s += alphabet[rnd(alphabet.length)]
  return s
}

function pick<T>(rnd: (n: number) => number, items: readonly T[]): T {
  return items[rnd(items.length)]!
}

function region(rnd: (n: number) => number): Region {
  let r = rnd(100)
  for (const g of REGIONS) {
    r -= g.weight
    if (r < 0) return g
  }
  return REGIONS[0]!
}

function residentialIp(rnd: (n: number) => number, g: Region): string {
  return `${pick(rnd, g.nets)}.${rnd(256)}.${1 + rnd(254)}`
}

function emailLocal(rnd: (n: number) => number): string {
  const f = pick(rnd, FIRST)
  const l = pick(rnd, LAST)
  switch (rnd(5)) {
    case 0:
      return `${f}.${l}`
    case 1:
      return `${f}${l}${70 + rnd(36)}`
    case 2:
      return `${f[0]}${l}${rnd(1000)}`
    case 3:
      return `${f}_${l}${rnd(100)}`
    default:
      return `${l}.${f}${rnd(10000)}`
  }
}

function people(count: number, rnd: (n: number) => number): Person[] {
  const out: Person[] = []
  const emails = new Set<string>()
  for (let i = 0; i < count; i++) {
    const g = region(rnd)
    let email = `${emailLocal(rnd)}@${pick(rnd, g.mail)}`
    if (emails.has(email)) email = email.replace('@', `.${i}@`)
    emails.add(email)
    out.push({
      user: `cus_${chars(rnd, ALNUM, 14)}`,
      email,
      fp: chars(rnd, '0123456789abcdef', 32),
      ip: residentialIp(rnd, g),
      zone: pick(rnd, g.zones),
      country: g.country,
    })
  }
  return out
}

/** Share of the feed from farm devices, in percent, and how many farm devices there are. */
const FARM_PERCENT = 3
const FARM_DEVICES = 12

/**
 * The feed in order, `batchSize` rows at a time. A person's first event is a signup, later ones logins
 * and checkouts; farm rows come from a dozen fingerprints (some emulated), each with a fresh account,
 * a throwaway-looking email and an address from a rotating residential proxy in any country.
 */
export function* historyBatches(
  events: number,
  peopleCount: number,
  batchSize: number,
): Generator<ScoreRow[]> {
  const rnd = prng(0x5eed1)
  const folk = people(peopleCount, rnd)
  const seen = new Uint8Array(peopleCount)
  const farms = Array.from({ length: FARM_DEVICES }, (_, i) => ({
    fp: chars(rnd, '0123456789abcdef', 32),
    zone: pick(rnd, ['Asia/Manila', 'Asia/Jakarta', 'Europe/Moscow', 'Asia/Ho_Chi_Minh']),
    emulated: i % 2 === 0,
  }))
  let batch: ScoreRow[] = []
  for (let e = 0; e < events; e++) {
    if (rnd(100) < FARM_PERCENT) {
      const farm = pick(rnd, farms)
      const g = region(rnd)
      const row: ScoreRow = {
        event: 'signup',
        user_id: `cus_${chars(rnd, ALNUM, 14)}`,
        ip: residentialIp(rnd, g),
        email: `${chars(rnd, 'abcdefghijklmnopqrstuvwxyz', 6 + rnd(5))}${rnd(1000)}@${pick(rnd, ['gmail.com', 'outlook.com', 'mail.com', 'proton.me'])}`,
        device_id: farm.fp,
        event_country: g.country,
        timezone: farm.zone,
      }
      if (farm.emulated) row['device'] = { is_emulated: true }
      batch.push(row)
    } else {
      const i = rnd(peopleCount)
      const p = folk[i]!
      const first = seen[i] === 0
      seen[i] = 1
      batch.push({
        event: first ? 'signup' : rnd(4) === 0 ? 'checkout' : 'login',
        user_id: p.user,
        ip: p.ip,
        email: p.email,
        device_id: p.fp,
        event_country: p.country,
        timezone: p.zone,
      })
    }
    if (batch.length === batchSize) {
      yield batch
      batch = []
    }
  }
  if (batch.length > 0) yield batch
}
