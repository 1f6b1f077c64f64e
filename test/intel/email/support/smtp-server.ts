import { createServer, type Server, type Socket } from 'node:net'

export type SmtpMode = 'accept-all' | 'reject-unknown' | 'greylist' | 'silent' | 'busy' | 'no-ehlo'

/**
 * A loopback SMTP server on 127.0.0.1 with a random port. It speaks enough of RFC 5321 for a RCPT
 * probe (multi-line EHLO reply included) and records every command and connection it sees.
 */
export class LoopbackSmtp {
  readonly commands: string[] = []
  connections = 0
  quits = 0
  port = 0
  private server: Server | null = null
  private readonly sockets = new Set<Socket>()

  constructor(
    private readonly mode: SmtpMode,
    private readonly mailboxes: string[] = [],
  ) {}

  async start(): Promise<void> {
    const server = createServer((socket) => {
      this.connections++
      this.sockets.add(socket)
      socket.on('close', () => this.sockets.delete(socket))
      socket.on('error', () => {})
      socket.setEncoding('latin1')
      if (this.mode === 'silent') return
      if (this.mode === 'busy') {
        socket.write('554 5.7.1 no service here\r\n')
      } else socket.write('220 loopback.test ESMTP ready\r\n')
      let buffer = ''
      socket.on('data', (chunk: string) => {
        buffer += chunk
        for (let eol = buffer.indexOf('\r\n'); eol >= 0; eol = buffer.indexOf('\r\n')) {
          const line = buffer.slice(0, eol)
          buffer = buffer.slice(eol + 2)
          this.commands.push(line)
          this.reply(socket, line)
        }
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    this.server = server
    const addr = server.address()
    this.port = typeof addr === 'object' && addr ? addr.port : 0
  }

  private reply(socket: Socket, line: string): void {
    const verb = line.slice(0, 4).toUpperCase()
    if (verb === 'EHLO') {
      if (this.mode === 'no-ehlo') return void socket.write('502 5.5.2 command not recognised\r\n')
      return void socket.write('250-loopback.test greets you\r\n250-SIZE 10240000\r\n250 8BITMIME\r\n')
    }
    if (verb === 'HELO') return void socket.write('250 loopback.test\r\n')
    if (verb === 'MAIL') return void socket.write('250 2.1.0 ok\r\n')
    if (verb === 'RCPT') {
      const rcpt = /<([^>]*)>/.exec(line)?.[1]?.toLowerCase() ?? ''
      if (this.mode === 'greylist') return void socket.write('451 4.7.1 try again later\r\n')
      if (this.mode === 'reject-unknown' && !this.mailboxes.includes(rcpt)) {
        return void socket.write('550 5.1.1 no such user\r\n')
      }
      return void socket.write('250 2.1.5 ok\r\n')
    }
    if (verb === 'QUIT') {
      this.quits++
      socket.end('221 2.0.0 bye\r\n')
      return
    }
    socket.write('500 5.5.1 unknown command\r\n')
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy()
    const server = this.server
    this.server = null
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
