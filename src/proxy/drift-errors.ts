/** A HAR file that cannot be replayed: said in one line, never as a stack trace. */
export class HarError extends Error {}

/** A run that cannot start (the sandbox unreachable, no account): one line, exit 2. */
export class DriftSetupError extends Error {}
