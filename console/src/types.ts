export interface RecordedCheck {
  check: string
  key?: string
  weight: number
  reason: string
  message: string
  evidence?: Record<string, unknown>
}

export interface EventView {
  id: string
  createdMs: number
  event: string
  userId: string | null
  deviceId: string | null
  resolvedDeviceId: string | null
  emailHash: string | null
  emailDomain: string | null
  ipPrefix: string | null
  asn: number | null
  ipCountry: string | null
  phoneHash: string | null
  phoneCountry: string | null
  score: number
  verdict: string
  reasons: string[]
  checks: RecordedCheck[]
}

export interface EventDetail {
  event: EventView
  explanation: string
  labels: { id: number; label: string; note: string | null; createdMs: number }[]
  device: {
    resolvedId: string
    profile: {
      firstSeenMs: number | null
      lastSeenMs: number | null
      observations: number
      distinctIps: number
      accounts: number
      countries: number
      browser: { os: string | null; browser: string | null; mobile: boolean; seenMs: number } | null
    }
    timeline: {
      createdMs: number
      eventId: string
      resolution: string
      networkPrefix: string | null
      asn: number | null
      country: string | null
      connectionType: string | null
      verdict: string
    }[]
  } | null
}
