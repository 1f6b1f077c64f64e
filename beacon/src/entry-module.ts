import { makeApi } from './api.js'

const api = makeApi(new URL(import.meta.url).origin)

export const collect = api.collect
export const watch = api.watch
const Verdict = { collect, watch }
export default Verdict
