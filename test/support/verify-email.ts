// Confirms a test account's address the way its person would: with the link its signup mailed,
// opened signed in as that account (`as`, a session of it: the link proves the mailbox, the session the password).
import { CaptureMailer, Client, type TestServer } from './server.js';

export async function verifyEmail(srv: Pick<TestServer, 'url' | 'mail'>, email: string, as: Client): Promise<void> {
  const token = CaptureMailer.tokenOf(await srv.mail.next(email, /^Verify your email/));
  const res = await as.post('/api/auth/verify-email', { token });
  if (res.status !== 200) throw new Error(`verify-email: ${res.status} ${res.text}`);
}

/** A session of `email`'s account on an HTTP client of its own: its person signed in elsewhere than the page under test. */
export async function signedInAs(base: string, email: string, password: string): Promise<Client> {
  const client = new Client(base);
  const res = await client.post('/api/auth/login', { email, password });
  if (res.status !== 200) throw new Error(`login: ${res.status} ${res.text}`);
  return client;
}
