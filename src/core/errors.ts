/** A mistake by the user (bad flag, bad file): printed as one clear message, exit code 2. */
export class UserInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UserInputError';
  }
}

/** Wrong command-line usage. */
export class UsageError extends UserInputError {}
