/**
 * The one error the HTTP surface answers with its own status: a refused upload (400, 413), a bad
 * query or parameter (400), a detector too busy to take an image (503). The server answers it as
 * `{"error": message}` with its status; anything else thrown is a 500.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
