// Password hashing behind a small interface, so tests can lower the bcrypt cost.
//
// bcrypt reads only the first 72 bytes of what it is given, so the password first goes through
// HMAC-SHA-256 under a server-side key (the pepper) and bcrypt hashes that digest's base64: the
// whole password counts, and a stolen database alone cannot be brute-forced. Stored hashes name
// their scheme: `hmac-sha256+bcrypt:<bcrypt hash>`; a bare bcrypt hash is the scheme before the
// pre-hash, which still verifies and is replaced at the next successful login.
import { createHmac } from 'node:crypto';
import bcrypt from 'bcrypt';

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** Timing-safe; compares against a dummy hash when there is no account, so timing does not reveal it. */
  verify(password: string, hash: string | null): Promise<boolean>;
  /** Whether a stored hash is of an older scheme or cost, to be replaced once the password is known. */
  outdated(hash: string): boolean;
}

const SCHEME = 'hmac-sha256+bcrypt:';

export function bcryptHasher(rounds: number, pepper: Buffer): PasswordHasher {
  const prehash = (password: string) => createHmac('sha256', pepper).update(password, 'utf8').digest('base64');
  const dummy = SCHEME + bcrypt.hashSync(prehash('not-a-real-password-0'), rounds);
  return {
    hash: async (password) => SCHEME + (await bcrypt.hash(prehash(password), rounds)),
    async verify(password, hash) {
      const stored = hash ?? dummy;
      const ok = stored.startsWith(SCHEME)
        ? await bcrypt.compare(prehash(password), stored.slice(SCHEME.length))
        : await bcrypt.compare(password, stored);
      return ok && hash !== null;
    },
    outdated: (hash) => !hash.startsWith(SCHEME) || bcrypt.getRounds(hash.slice(SCHEME.length)) !== rounds,
  };
}
