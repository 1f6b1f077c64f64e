/** What the user agent string claims: operating system, JavaScript engine, touch device, mobile. */

export type Os = 'windows' | 'mac' | 'ios' | 'android' | 'linux' | 'chromeos'
export type Engine = 'v8' | 'spidermonkey' | 'jsc'

export function claimedOs(ua: string): Os | null {
  if (/Windows NT|Win64|Win32/.test(ua)) return 'windows'
  if (/iPhone|iPad|iPod/.test(ua)) return 'ios'
  if (/Android/.test(ua)) return 'android'
  if (/CrOS/.test(ua)) return 'chromeos'
  if (/Macintosh|Mac OS X/.test(ua)) return 'mac'
  if (/Linux|X11/.test(ua)) return 'linux'
  return null
}

/** Every browser on iOS runs WebKit's JavaScriptCore, whatever it is called. */
export function claimedEngine(ua: string): Engine | null {
  if (/iPhone|iPad|iPod|CriOS|FxiOS|EdgiOS/.test(ua)) return 'jsc'
  if (/Firefox\//.test(ua)) return 'spidermonkey'
  if (/Chrome\/|Chromium\/|Edg\/|OPR\//.test(ua)) return 'v8'
  if (/Safari\//.test(ua)) return 'jsc'
  return null
}

/** Chromium's convention: "Mobile" in the UA exactly when userAgentData.mobile is true. */
export const claimsMobile = (ua: string) => /Mobi/.test(ua)

/** Phones and tablets always have a touch screen. */
export const claimsTouchDevice = (ua: string) => /Android|iPhone|iPad|iPod/.test(ua)

/** navigator.platform read as an operating system. */
export function platformOs(platform: string): Os | null {
  if (/^Win/.test(platform)) return 'windows'
  if (/^(iPhone|iPad|iPod)/.test(platform)) return 'ios'
  if (/^Mac/.test(platform)) return 'mac'
  if (/Android/.test(platform)) return 'android'
  if (/CrOS/.test(platform)) return 'chromeos'
  if (/Linux|X11|arm|aarch/i.test(platform)) return 'linux'
  return null
}

/** navigator.userAgentData.platform (Chromium, secure contexts) read as an operating system. */
export function uaDataOs(platform: string | undefined): Os | null {
  switch (platform) {
    case 'Windows':
      return 'windows'
    case 'macOS':
      return 'mac'
    case 'iOS':
      return 'ios'
    case 'Android':
      return 'android'
    case 'Chrome OS':
    case 'Chromium OS':
      return 'chromeos'
    case 'Linux':
      return 'linux'
    default:
      return null
  }
}

/** The operating systems a lower-level signal may show for a claimed one (iPad desktop mode says Mac; Android and ChromeOS run Linux). */
const COMPATIBLE: Record<Os, Os[]> = {
  windows: ['windows'],
  mac: ['mac', 'ios'],
  ios: ['ios', 'mac'],
  android: ['android', 'linux'],
  linux: ['linux', 'chromeos'],
  chromeos: ['chromeos', 'linux'],
}

export const compatible = (claimed: Os, seen: Os) => COMPATIBLE[claimed].includes(seen)
