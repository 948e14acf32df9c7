// Confirms a test account's address the way its person would: with the link its signup mailed.
import { CaptureMailer, Client, type TestServer } from './server.js';

export async function verifyEmail(srv: Pick<TestServer, 'url' | 'mail'>, email: string): Promise<void> {
  const token = CaptureMailer.tokenOf(await srv.mail.next(email, /^Verify your email/));
  const res = await new Client(srv.url).post('/api/auth/verify-email', { token });
  if (res.status !== 200) throw new Error(`verify-email: ${res.status} ${res.text}`);
}
