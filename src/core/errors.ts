/** The message of anything thrown: an Error's own message, anything else as a string. */
export const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** All there is to say of anything thrown, for a last word on stderr: an Error's stack (or message). */
export const errorStack = (err: unknown): string =>
  err instanceof Error ? (err.stack ?? err.message) : String(err);
