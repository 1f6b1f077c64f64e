import { createSocket } from 'node:dgram'
import dnsPacket from 'dns-packet'

/**
 * The benchmark runs offline: a loopback DNS server that gives every domain an MX record, so MX lookups
 * cost a real (cached) DNS round trip instead of a timeout. Domains under `.invalid` get NXDOMAIN.
 */
export async function startBenchDns(): Promise<{ server: string; stop: () => void }> {
  const socket = createSocket('udp4')
  socket.on('message', (msg, peer) => {
    let q: dnsPacket.Packet
    try {
      q = dnsPacket.decode(msg)
    } catch {
      return
    }
    const question = q.questions?.[0]
    if (!question) return
    const nx = question.name.endsWith('.invalid')
    const answers: dnsPacket.Answer[] =
      !nx && question.type === 'MX'
        ? [
            {
              type: 'MX',
              name: question.name,
              ttl: 300,
              data: { preference: 10, exchange: `mx.${question.name}` },
            },
          ]
        : []
    const reply = dnsPacket.encode({
      id: q.id,
      type: 'response',
      flags: (nx ? 3 : 0) | 0x0400 | 0x0100 | 0x0080,
      questions: q.questions,
      answers,
    })
    socket.send(reply, peer.port, peer.address)
  })
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', () => r()))
  return { server: `127.0.0.1:${socket.address().port}`, stop: () => socket.close() }
}
