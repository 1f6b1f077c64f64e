import { createSocket, type Socket } from 'node:dgram'
import dnsPacket from 'dns-packet'

/** What the loopback server answers for one name. Record lists absent for a type mean NODATA. */
export interface Zone {
  rcode?: 'NXDOMAIN' | 'SERVFAIL' | 'REFUSED'
  /** Never answer: the client must time out. */
  silent?: boolean
  MX?: Array<{ preference: number; exchange: string }>
  A?: string[]
  AAAA?: string[]
}

const RCODE = { NXDOMAIN: 3, SERVFAIL: 2, REFUSED: 5 } as const
const AUTHORITATIVE = 0x0400
const RECURSION_DESIRED = 0x0100
const RECURSION_AVAILABLE = 0x0080

/**
 * A tiny authoritative DNS server over UDP on 127.0.0.1 with a random port, speaking the real wire format.
 * Answers carry TTL 0 so the stub resolver's own cache never hides a query from the log.
 */
export class LoopbackDns {
  readonly queries: string[] = []
  private socket: Socket | null = null
  port = 0

  constructor(private readonly zones: Record<string, Zone>) {}

  get server(): string {
    return `127.0.0.1:${this.port}`
  }

  count(name: string, type?: string): number {
    return this.queries.filter((q) => q === `${name} ${type}` || (!type && q.startsWith(`${name} `))).length
  }

  async start(): Promise<void> {
    const socket = createSocket('udp4')
    socket.on('message', (msg, peer) => {
      let query: dnsPacket.Packet
      try {
        query = dnsPacket.decode(msg)
      } catch {
        return
      }
      const q = query.questions?.[0]
      if (!q) return
      const name = q.name.toLowerCase()
      this.queries.push(`${name} ${q.type}`)
      const zone = this.zones[name]
      if (zone?.silent) return
      let rcode = 0
      const answers: dnsPacket.Answer[] = []
      if (!zone) rcode = RCODE.NXDOMAIN
      else if (zone.rcode) rcode = RCODE[zone.rcode]
      else if (q.type === 'MX') {
        for (const mx of zone.MX ?? []) answers.push({ type: 'MX', name: q.name, ttl: 0, data: mx })
      } else if (q.type === 'A') {
        for (const ip of zone.A ?? []) answers.push({ type: 'A', name: q.name, ttl: 0, data: ip })
      } else if (q.type === 'AAAA') {
        for (const ip of zone.AAAA ?? []) answers.push({ type: 'AAAA', name: q.name, ttl: 0, data: ip })
      }
      const flags = AUTHORITATIVE | RECURSION_AVAILABLE | ((query.flags ?? 0) & RECURSION_DESIRED) | rcode
      const reply = dnsPacket.encode({ id: query.id, type: 'response', flags, questions: [q], answers })
      socket.send(reply, peer.port, peer.address)
    })
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject)
      socket.bind(0, '127.0.0.1', () => resolve())
    })
    this.socket = socket
    this.port = socket.address().port
  }

  async stop(): Promise<void> {
    const s = this.socket
    this.socket = null
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()))
  }
}
