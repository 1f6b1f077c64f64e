/** A command line that cannot be run as written: exit code 2 and the usage text. */
export class UsageError extends Error {}
