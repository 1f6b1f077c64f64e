import type { Store } from '../store/index.js'
import type { Tenant } from '../store/tenants.js'
import type { Clock } from '../util/clock.js'
import type { Hasher } from '../util/secrets.js'

/** What every service verb needs; built once per app. */
export interface Deps {
  store: Store
  clock: Clock
  hasher: Hasher
}

/** A verb's view of one request: the deps plus the tenant it acts for. Every query is scoped by it. */
export interface TenantCtx extends Deps {
  tenant: Tenant
}
