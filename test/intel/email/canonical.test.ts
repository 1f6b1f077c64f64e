import { describe, expect, it } from 'vitest'
import { type AliasTrick, canonicalizeEmail, hasPlusTag } from '../../../src/intel/email/canonical.js'

type Row = [raw: string, canonical: string, tricks: AliasTrick[]]

function check(rows: Row[]): void {
  for (const [raw, canonical, tricks] of rows) {
    const c = canonicalizeEmail(raw)
    expect(c, raw).not.toBeNull()
    expect(c?.canonical, raw).toBe(canonical)
    expect(c?.aliasTricks, raw).toEqual(tricks)
    expect(c?.isAliased, raw).toBe(tricks.length > 0)
  }
}

describe('canonicalizeEmail', () => {
  it('gmail: dots ignored, +tags removed, googlemail folded into gmail', () => {
    check([
      ['johnsmith@gmail.com', 'johnsmith@gmail.com', []],
      ['John.Smith@Gmail.com', 'johnsmith@gmail.com', ['dot_trick']],
      ['j.o.h.n.s.m.i.t.h+shop@gmail.com', 'johnsmith@gmail.com', ['plus_tag', 'dot_trick']],
      ['johnsmith+a+b@gmail.com', 'johnsmith@gmail.com', ['plus_tag']],
      ['johnsmith@googlemail.com', 'johnsmith@gmail.com', ['domain_alias']],
      ['john.smith+x@googlemail.com', 'johnsmith@gmail.com', ['plus_tag', 'dot_trick', 'domain_alias']],
    ])
  })

  it('microsoft: +tags removed, dots kept, domains never merged', () => {
    check([
      ['john.smith@outlook.com', 'john.smith@outlook.com', []],
      ['john.smith+news@outlook.com', 'john.smith@outlook.com', ['plus_tag']],
      ['john.smith+x@hotmail.co.uk', 'john.smith@hotmail.co.uk', ['plus_tag']],
      ['john.smith@hotmail.com', 'john.smith@hotmail.com', []],
      ['john.smith@live.com', 'john.smith@live.com', []],
      ['john.smith@msn.com', 'john.smith@msn.com', []],
    ])
    expect(canonicalizeEmail('johnsmith@outlook.com')?.canonical).not.toBe(
      canonicalizeEmail('john.smith@outlook.com')?.canonical,
    )
  })

  it('apple: me.com and mac.com are the same mailbox as icloud.com', () => {
    check([
      ['anna@icloud.com', 'anna@icloud.com', []],
      ['anna@me.com', 'anna@icloud.com', ['domain_alias']],
      ['anna+promo@mac.com', 'anna@icloud.com', ['plus_tag', 'domain_alias']],
      ['anna.lee@icloud.com', 'anna.lee@icloud.com', []],
    ])
  })

  it('yahoo: a -keyword disposable address collapses to its base name; + is not a tag there', () => {
    check([
      ['jsmith-shopping@yahoo.com', 'jsmith@yahoo.com', ['plus_tag']],
      ['jsmith-a-b@yahoo.co.uk', 'jsmith@yahoo.co.uk', ['plus_tag']],
      ['j.smith@yahoo.com', 'j.smith@yahoo.com', []],
      ['jsmith-x@ymail.com', 'jsmith@ymail.com', ['plus_tag']],
    ])
    expect(canonicalizeEmail('jsmith@yahoo.com')?.canonical).not.toBe(
      canonicalizeEmail('jsmith@ymail.com')?.canonical,
    )
    // Yahoo Japan is a different company: its hyphens are part of the name.
    check([['taro-yamada@yahoo.co.jp', 'taro-yamada@yahoo.co.jp', []]])
  })

  it('proton: all four domains are one mailbox; dots, hyphens and underscores ignored', () => {
    check([
      ['alice@proton.me', 'alice@proton.me', []],
      ['alice@protonmail.com', 'alice@proton.me', ['domain_alias']],
      ['alice@protonmail.ch', 'alice@proton.me', ['domain_alias']],
      ['a.l-i_ce+news@pm.me', 'alice@proton.me', ['plus_tag', 'dot_trick', 'domain_alias']],
    ])
  })

  it('fastmail: +tags and subdomain addressing', () => {
    check([
      ['bob+lists@fastmail.com', 'bob@fastmail.com', ['plus_tag']],
      ['lists@bob.fastmail.com', 'bob@fastmail.com', ['plus_tag', 'domain_alias']],
      ['bob@fastmail.fm', 'bob@fastmail.fm', []],
    ])
    // Deeper names are not Fastmail mailboxes.
    check([['x@a.b.fastmail.com', 'x@a.b.fastmail.com', []]])
  })

  it('yandex: all Yandex domains are one mailbox; dot and hyphen are the same character', () => {
    check([
      ['ivan-petrov@yandex.ru', 'ivan-petrov@yandex.ru', []],
      ['ivan.petrov@yandex.ru', 'ivan-petrov@yandex.ru', ['dot_trick']],
      ['ivan.petrov+shop@ya.ru', 'ivan-petrov@yandex.ru', ['plus_tag', 'dot_trick', 'domain_alias']],
      ['ivan-petrov@yandex.com', 'ivan-petrov@yandex.ru', ['domain_alias']],
    ])
  })

  it('generic domains: only a +tag is removed, dots and hyphens are kept', () => {
    check([
      ['Jane.Doe@Example.com', 'jane.doe@example.com', []],
      ['jane.doe+invoices@example.com', 'jane.doe@example.com', ['plus_tag']],
      ['jane-doe@example.com', 'jane-doe@example.com', []],
      ['jane.doe@gmx.de', 'jane.doe@gmx.de', []],
      ['+tag@example.com', '+tag@example.com', []],
    ])
  })

  it('keeps the written parts next to the canonical ones', () => {
    expect(canonicalizeEmail(' J.Smith+x@GoogleMail.com ')).toEqual({
      canonical: 'jsmith@gmail.com',
      local: 'J.Smith+x',
      domain: 'googlemail.com',
      canonicalLocal: 'jsmith',
      canonicalDomain: 'gmail.com',
      isAliased: true,
      aliasTricks: ['plus_tag', 'dot_trick', 'domain_alias'],
    })
  })

  it('is stable: canonicalising a canonical address returns it unchanged', () => {
    for (const raw of [
      'J.o.h.n+x@googlemail.com',
      'a.l-i_ce+x@pm.me',
      'ivan.petrov@ya.ru',
      'lists@bob.fastmail.com',
    ]) {
      const once = canonicalizeEmail(raw)?.canonical
      expect(once).toBeDefined()
      expect(canonicalizeEmail(once!)?.canonical).toBe(once)
      expect(canonicalizeEmail(once!)?.isAliased).toBe(false)
    }
  })

  it('returns null for an unusable address', () => {
    expect(canonicalizeEmail('not-an-email')).toBeNull()
    expect(canonicalizeEmail('a@b')).toBeNull()
  })
})

describe('hasPlusTag', () => {
  it('is true only when a sub-address tag is present', () => {
    expect(hasPlusTag('a+b@example.com')).toBe(true)
    expect(hasPlusTag('a-b@yahoo.com')).toBe(true)
    expect(hasPlusTag('a-b@example.com')).toBe(false)
    expect(hasPlusTag('a.b@gmail.com')).toBe(false)
    expect(hasPlusTag('broken')).toBe(false)
  })
})
