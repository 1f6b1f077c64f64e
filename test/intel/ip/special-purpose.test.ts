import { describe, expect, it } from 'vitest'
import { isProbeRefused } from '../../../src/intel/email/smtp-probe.js'
import { specialPurpose } from '../../../src/intel/ip/special-purpose.js'

/** [address, the block it must be refused as (a fragment of the reason)]. */
const REFUSED: [string, string][] = [
  // IANA IPv4 Special-Purpose Address Registry
  ['0.0.0.0', 'This network'],
  ['0.1.2.3', 'This network'],
  ['10.20.30.40', 'Private-Use'],
  ['100.64.0.1', 'Shared Address Space'],
  ['100.127.255.254', 'Shared Address Space'],
  ['127.0.0.1', 'Loopback'],
  ['127.255.255.255', 'Loopback'],
  ['169.254.169.254', 'Link Local'],
  ['172.16.0.1', 'Private-Use'],
  ['172.31.255.255', 'Private-Use'],
  ['192.0.0.1', 'IETF Protocol Assignments'],
  ['192.0.0.9', 'IETF Protocol Assignments'],
  ['192.0.0.170', 'IETF Protocol Assignments'],
  ['192.0.2.10', 'TEST-NET-1'],
  ['192.31.196.1', 'AS112-v4'],
  ['192.52.193.1', 'AMT'],
  ['192.88.99.1', '6to4 Relay Anycast'],
  ['192.168.1.1', 'Private-Use'],
  ['192.175.48.1', 'AS112'],
  ['198.18.0.1', 'Benchmarking'],
  ['198.19.255.255', 'Benchmarking'],
  ['198.51.100.7', 'TEST-NET-2'],
  ['203.0.113.5', 'TEST-NET-3'],
  ['224.0.0.1', 'Multicast'],
  ['239.255.255.250', 'Multicast'],
  ['240.0.0.1', 'Reserved'],
  ['255.255.255.255', 'Reserved'],
  // IANA IPv6 Special-Purpose Address Registry
  ['::', 'Unspecified'],
  ['::1', 'Loopback'],
  ['::ffff:8.8.8.8', 'IPv4-mapped'],
  ['::ffff:127.0.0.1', 'IPv4-mapped'],
  ['::ffff:7f00:1', 'IPv4-mapped'],
  ['::8.8.8.8', 'IPv4-compatible'],
  ['64:ff9b::8.8.8.8', 'IPv4-IPv6 Translation'],
  ['64:ff9b:1::1', 'Local-use IPv4/IPv6 Translation'],
  ['100::1', 'Discard-Only'],
  ['100:0:0:1::1', 'Dummy IPv6 Prefix'],
  ['2001::1', 'Teredo server address embedding 0.0.0.0'],
  ['2001:1::1', 'IETF Protocol Assignments'],
  ['2001:2::1', 'IETF Protocol Assignments'],
  ['2001:3::1', 'IETF Protocol Assignments'],
  ['2001:4:112::1', 'IETF Protocol Assignments'],
  ['2001:20::1', 'IETF Protocol Assignments'],
  ['2001:db8::1', 'Documentation'],
  ['2002:808:808::1', '6to4'],
  ['2620:4f:8000::1', 'AS112'],
  ['3fff::1', 'Documentation'],
  ['5f00::1', 'Segment Routing'],
  ['fc00::1', 'Unique-Local'],
  ['fd12:3456::1', 'Unique-Local'],
  ['fe80::1', 'Link-Local'],
  ['fe80::1%eth0', 'Link-Local'],
  ['ff02::1', 'Multicast'],
  ['fec0::1', 'outside global unicast'],
  ['4000::1', 'outside global unicast'],
  // Embedded IPv4 addresses are checked too, and named in the reason.
  ['64:ff9b::127.0.0.1', 'NAT64 address embedding 127.0.0.1: Loopback'],
  ['64:ff9b::a9fe:a9fe', 'NAT64 address embedding 169.254.169.254: Link Local'],
  ['2002:7f00:1::', '6to4 address embedding 127.0.0.1: Loopback'],
  ['2002:c0a8:101::1', '6to4 address embedding 192.168.1.1: Private-Use'],
  ['::10.0.0.1', 'IPv4-compatible address embedding 10.0.0.1: Private-Use'],
  ['::ffff:10.0.0.1', 'embedding Private-Use'],
  // Teredo client 10.0.0.1 is stored inverted (f5ff:fffe); server 192.168.0.1 as is.
  ['2001:0:4136:e378:8000:63bf:f5ff:fffe', 'Teredo client address embedding 10.0.0.1'],
  ['2001:0:c0a8:1:8000:63bf:3fff:fdd2', 'Teredo server address embedding 192.168.0.1'],
  // Not an address at all.
  ['mail.example.com', 'not an IP address'],
  ['', 'not an IP address'],
]

const PUBLIC = [
  '8.8.8.8',
  '1.1.1.1',
  '100.63.255.255',
  '100.128.0.0',
  '172.32.0.1',
  '192.0.1.1',
  '198.17.255.255',
  '198.20.0.1',
  '223.255.255.255',
  '2a00:1450:4001:81c::200e',
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '2001:200::1',
]

describe('special-purpose addresses', () => {
  it.each(REFUSED)('%s is refused (%s)', (address, why) => {
    const reason = specialPurpose(address)
    expect(reason).not.toBeNull()
    expect(reason).toContain(why)
    expect(isProbeRefused(address)).toBe(true)
  })

  it.each(PUBLIC)('%s is an ordinary public address', (address) => {
    expect(specialPurpose(address)).toBeNull()
    expect(isProbeRefused(address)).toBe(false)
  })
})
