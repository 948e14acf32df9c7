// Mail at rest in the store's outbox is sealed: AES-256-GCM under the key derived from the server
// secret for this purpose (ServerKeys.mail), a fresh 96-bit nonce per message. A confirmation or
// reset link in a backup or a database dump is then worth nothing without the secret, and a
// record altered in the store fails to open rather than sending something else.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { MailMessage } from './mailer.js';

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** nonce ‖ ciphertext ‖ tag, base64url. */
export function sealMail(key: Buffer, message: MailMessage): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  const body = Buffer.concat([
    cipher.update(JSON.stringify({ to: message.to, subject: message.subject, text: message.text }), 'utf8'),
    cipher.final(),
  ]);
  return Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64url');
}

/** The message, or an error when the record was altered or sealed under another secret. */
export function openMail(key: Buffer, sealed: string): MailMessage {
  const raw = Buffer.from(sealed, 'base64url');
  if (raw.length < NONCE_BYTES + TAG_BYTES) throw new Error('sealed mail is too short');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, NONCE_BYTES));
  decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
  const json = Buffer.concat([
    decipher.update(raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES)),
    decipher.final(),
  ]).toString('utf8');
  const m = JSON.parse(json) as MailMessage;
  return { to: m.to, subject: m.subject, text: m.text };
}
