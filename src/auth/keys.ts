// The keys derived from the server secret (SECRET_KEY, or the one the embedded store keeps):
// one per purpose, so no value computed for one use is valid for another.
import { createHmac } from 'node:crypto';

export interface ServerKeys {
  /** Pre-hashes passwords before bcrypt (src/auth/passwords.ts). */
  pepper: Buffer;
  /** Signs the CSRF double-submit token (src/auth/csrf.ts). */
  csrf: Buffer;
  /** Keys the stored form of device-flow user codes (src/accounts/device-codes.ts): a plain hash of ~34 bits reverses offline. */
  userCode: Buffer;
  /** Signs the board commands nodes forward to a board's home (src/cluster/signed-envelope.ts). */
  forward: Buffer;
  /** Encrypts the mail waiting in the store's outbox (src/mail/sealed.ts): its links are secrets. */
  mail: Buffer;
}

export function deriveKeys(secret: string): ServerKeys {
  const derive = (purpose: string) => createHmac('sha256', secret).update(`agent-board/${purpose}`).digest();
  return {
    pepper: derive('password-pepper'),
    csrf: derive('csrf'),
    userCode: derive('device-user-code'),
    forward: derive('node-forwarding'),
    mail: derive('mail-outbox'),
  };
}
