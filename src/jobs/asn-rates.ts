import type { Job } from './types.js'

/** Recomputes the ASN fraud rates behind `abusive_asn` from the daily aggregates. */
export const asnRatesJob: Job = {
  name: 'asn-rates',
  scope: 'node',
  reads: 'asn_daily (the last 30 days of events and bad events per ASN)',
  writes: "this process's in-memory ASN rates (AsnRates), read by every score",
  intervalMs: 60_000,
  firstRunMs: 0,
  run: async ({ store, clock, asnRates }) => asnRates.refresh(store, clock.now()),
}
