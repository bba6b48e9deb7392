/** The message of anything thrown: an Error's own message, anything else as a string. */
export const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));
