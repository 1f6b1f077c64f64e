/**
 * verdict's mark: a check inside a rounded square, as SVG. The favicon of the console and of `/`, and the
 * logo of `/docs`.
 */
export const VERDICT_ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><title>verdict</title><rect width="32" height="32" rx="7" fill="#1f4e8c"/><path d="M8 16.5l5.2 5.2L24.5 10" fill="none" stroke="#fff" stroke-width="3.6" stroke-linecap="round" stroke-linejoin="round"/></svg>`

/** The wordmark `/docs` shows instead of Swagger's logo. */
export const VERDICT_LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 150 32"><title>verdict API</title><rect width="32" height="32" rx="7" fill="#1f4e8c"/><path d="M8 16.5l5.2 5.2L24.5 10" fill="none" stroke="#fff" stroke-width="3.6" stroke-linecap="round" stroke-linejoin="round"/><text x="40" y="23" font-family="system-ui, sans-serif" font-size="20" font-weight="600" fill="#fff">verdict API</text></svg>`
