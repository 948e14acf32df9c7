// A refusal from the board's pure decisions: a registry code, a message, and details for the caller.

export class BoardError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'BoardError';
  }
}
