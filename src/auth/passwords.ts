// Password hashing behind a small interface, so tests can lower the bcrypt cost.
import bcrypt from 'bcrypt';

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** Timing-safe; compares against a dummy hash when there is no account, so timing does not reveal it. */
  verify(password: string, hash: string | null): Promise<boolean>;
}

export function bcryptHasher(rounds: number): PasswordHasher {
  const dummy = bcrypt.hashSync('not-a-real-password-0', rounds);
  return {
    hash: (password) => bcrypt.hash(password, rounds),
    async verify(password, hash) {
      const ok = await bcrypt.compare(password, hash ?? dummy);
      return ok && hash !== null;
    },
  };
}
