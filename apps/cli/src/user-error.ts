/** A mistake of the user's (bad flag, bad file): printed as one line, exit code 2. */
export class UserError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UserError';
  }
}
