// Real mail: the node picks SMTP from SMTP_URL (src/mail/from-config.ts, as src/main.ts does) and
// sends to a real SMTP server in this process. The signup confirmation, an invitation and a
// password reset arrive over SMTP from MAIL_FROM, and their links work; a server that refuses
// (4xx) or is not there yet is retried with backoff until the mail goes through; a permanent
// refusal (5xx) is logged at error level with its code; the operation that asked answers as
// its contract says every time. Mail waits in the store's outbox, sealed: a node that stops
// cleanly, or is killed with -9, leaves it there, and the next start sends it.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { bcryptHasher } from '../../src/auth/passwords.js';
import { deriveKeys } from '../../src/auth/keys.js';
import { loadConfig } from '../../src/config.js';
import { mailerFrom } from '../../src/mail/from-config.js';
import { openMail } from '../../src/mail/sealed.js';
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { openEmbeddedStore } from '../../store/embedded/index.js';
import { startMain } from '../support/process.js';
import { Client, signedUp, TEST_SECRET } from '../support/server.js';
import { scrape } from '../support/metrics.js';
import { startSmtp, type TestSmtp } from '../support/smtp.js';
import { tempDir, unique, type TempDir } from '../support/temp.js';
import { signedInAs } from '../support/verify-email.js';

const FROM = 'Board at test <board@mail.test>';
const keys = deriveKeys(TEST_SECRET);
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface MailNode {
  url: string;
  server: RunningServer;
  /** Every log line the node wrote, parsed. */
  logs: Record<string, unknown>[];
}

/** A node configured as `npm start` would be with SMTP_URL and MAIL_FROM, retrying fast; on `dir` when given (a restart). */
async function mailNode(smtpUrl: string, given?: TempDir): Promise<MailNode> {
  const dir = given ?? (await tempDir());
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({ write: (chunk: Buffer, _e, done) => (logs.push(JSON.parse(chunk.toString())), done()) });
  const logger = pino({ level: 'info' }, sink);
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dir.path,
    PUBLIC_URL: 'http://board.test',
    SMTP_URL: smtpUrl,
    MAIL_FROM: FROM,
    ADDRESS_RATE_PER_MINUTE: '1000',
    METRICS_PORT: '0',
  });
  const store = await openEmbeddedStore(dir.path);
  const mailer = mailerFrom(config, { store, keys }, logger, { baseDelayMs: 100, maxDelayMs: 400, maxAttempts: 30 });
  const server = await startServer({
    config,
    store,
    limiter: new MemoryRateLimiter(),
    passwords: bcryptHasher(4, keys.pepper),
    keys,
    mailer,
    logger,
  });
  let stopped = false;
  cleanups.push(async () => {
    if (!stopped) await server.shutdown();
    if (!given) await dir.remove();
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    server: { ...server, shutdown: async () => ((stopped = true), server.shutdown()) },
    logs,
  };
}

async function smtp(port?: number): Promise<TestSmtp> {
  const s = await startSmtp(port);
  cleanups.push(() => s.close());
  return s;
}

const tokenIn = (body: string): string => /#token=([\w-]+)/.exec(body)![1]!;
const logged = (node: MailNode, msg: string) => node.logs.filter((l) => l.msg === msg);

describe('mail over SMTP', () => {
  it('the signup confirmation, an invitation and a password reset arrive over SMTP from MAIL_FROM, and their links work', async () => {
    const mta = await smtp();
    const node = await mailNode(mta.url);

    // Signup: 201, and the confirmation arrives; its link confirms the address.
    const owner = await signedUp(node.url);
    const confirm = await mta.next(owner.email, /^Verify your email/);
    expect(confirm.from).toBe('board@mail.test');
    expect(confirm.raw).toMatch(/^From: Board at test <board@mail\.test>$/im);
    expect(confirm.body).toContain('http://board.test/verify-email#token=');
    expect((await owner.client.post('/api/auth/verify-email', { token: tokenIn(confirm.body) })).status).toBe(200);

    // An invitation to the owner's board.
    const projectId = (await owner.client.get('/api/projects')).body.projects[0].projectId as string;
    const invitee = `${unique('invitee')}@example.com`;
    const invited = await owner.client.post(`/api/boards/${projectId}/invitations`, { email: invitee, role: 'member' });
    expect(invited.status, invited.text).toBe(201);
    const invitation = await mta.next(invitee, /^Invitation to the board/);
    expect(invitation.body).toMatch(
      new RegExp(`http://board\\.test/invitations/${invited.body.invitation.invitationId}#token=[\\w-]+`),
    );

    // A password reset: 202 as always, the link arrives and sets the new password.
    expect((await new Client(node.url).post('/api/auth/forgot-password', { email: owner.email })).status).toBe(202);
    const reset = await mta.next(owner.email, /^Reset your board password/);
    expect(
      (
        await new Client(node.url).post('/api/auth/reset-password', {
          token: tokenIn(reset.body),
          newPassword: 'a brand new password',
        })
      ).status,
    ).toBe(204);
    expect(
      (await new Client(node.url).post('/api/auth/login', { email: owner.email, password: 'a brand new password' }))
        .status,
    ).toBe(200);
  });

  it('a server that refuses (451) is retried with backoff until the mail goes through, each failure logged with its code', async () => {
    const mta = await smtp();
    const node = await mailNode(mta.url);
    const { email } = await signedUp(node.url);
    await mta.next(email, /^Verify your email/);
    mta.refuse(451, 3);
    expect((await new Client(node.url).post('/api/auth/forgot-password', { email })).status).toBe(202);
    const reset = await mta.next(email, /^Reset your board password/);
    expect(reset.body).toContain('/reset-password#token=');
    expect(mta.refusals).toBe(3);
    const retries = logged(node, 'mail not sent; retrying');
    expect(retries).toHaveLength(3);
    for (const r of retries) expect(r).toMatchObject({ level: 40, to: email, responseCode: 451, code: 'EENVELOPE' });
    expect(retries.map((r) => r.text)).toEqual([undefined, undefined, undefined]); // the link never goes to the log
    // The server has the message before the node has the server's answer to it: the node logs it then.
    await expect
      .poll(() => logged(node, 'mail delivered after retrying'), { timeout: 10_000 })
      .toEqual([expect.objectContaining({ to: email, attempts: 4 })]);
    const m = await scrape(node.server.metricsPort!);
    expect([
      m.value('board_mail_sent_total'),
      m.value('board_mail_retries_total'),
      m.value('board_mail_failed_total'),
      m.value('board_mail_queued'),
    ]).toEqual([2, 3, 0, 0]);
  });

  it('a server not there yet is retried until it comes up', async () => {
    const placeholder = await startSmtp();
    const port = placeholder.port;
    await placeholder.close();
    const node = await mailNode(`smtp://127.0.0.1:${port}`);
    // Signup answers 201 at once though no mail server answers.
    const { email } = await signedUp(node.url);
    await expect
      .poll(() => logged(node, 'mail not sent; retrying').length, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(2);
    expect(logged(node, 'mail not sent; retrying')[0]).toMatchObject({
      to: email,
      code: 'ESOCKET',
      reason: expect.stringContaining('ECONNREFUSED'),
    });
    const mta = await smtp(port);
    await mta.next(email, /^Verify your email/);
  });

  it('a permanent refusal (550) is not retried and is logged at error level with its code; the signup still answers 201', async () => {
    const mta = await smtp();
    const node = await mailNode(mta.url);
    mta.refuse(550, 1);
    const { email } = await signedUp(node.url);
    await expect
      .poll(() => logged(node, 'mail refused permanently by the server; not retried').length, { timeout: 10_000 })
      .toBe(1);
    expect(logged(node, 'mail refused permanently by the server; not retried')[0]).toMatchObject({
      level: 50,
      to: email,
      responseCode: 550,
      attempts: 1,
    });
    expect(mta.refusals).toBe(1);
    expect(mta.received.filter((m) => m.to.includes(email))).toHaveLength(0);
    expect((await scrape(node.server.metricsPort!)).value('board_mail_failed_total')).toBe(1);
  });

  it('mail still waiting when the node stops is handed back to the outbox, sealed, and the next start sends it', async () => {
    const placeholder = await startSmtp();
    await placeholder.close();
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const node = await mailNode(`smtp://127.0.0.1:${placeholder.port}`, dir);
    const { email, password } = await signedUp(node.url);
    await expect
      .poll(() => logged(node, 'mail not sent; retrying').length, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(1);
    await node.server.shutdown();
    expect(
      logged(node, 'mail not sent before the node stopped; it waits in the outbox for another node or the next start'),
    ).toEqual([expect.objectContaining({ level: 40, to: email, subject: 'Verify your email' })]);

    // At rest it is sealed: neither the address nor the link can be read from the store.
    const store = await openEmbeddedStore(dir.path);
    const waiting = await store.mailOutbox.find({});
    await store.close();
    expect(waiting).toHaveLength(1);
    expect(waiting[0]!.sealed).not.toContain(email.split('@')[0]);
    expect(waiting[0]!.heldUntil).toBeLessThanOrEqual(Date.now());
    expect(openMail(keys.mail, waiting[0]!.sealed)).toMatchObject({ to: email, subject: 'Verify your email' });
    expect(() => openMail(deriveKeys(`${TEST_SECRET}-another`).mail, waiting[0]!.sealed)).toThrow();

    // The next start, with the mail server back, sends it, and its link works.
    const mta = await smtp(placeholder.port);
    const again = await mailNode(mta.url, dir);
    const confirm = await mta.next(email, /^Verify your email/);
    const signedIn = await signedInAs(again.url, email, password);
    expect((await signedIn.post('/api/auth/verify-email', { token: tokenIn(confirm.body) })).status).toBe(200);
    expect(logged(again, 'mail taken over from the outbox: its holder stopped')).toEqual([
      expect.objectContaining({ to: email, attempts: expect.any(Number) }),
    ]);
  });

  it('a node killed with -9 while its mail waits does not lose it: the next start sends it once the takeover delay has passed', async () => {
    const placeholder = await startSmtp();
    await placeholder.close();
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const env = {
      DATA_DIR: dir.path,
      SMTP_URL: `smtp://127.0.0.1:${placeholder.port}`,
      MAIL_FROM: FROM,
      PUBLIC_URL: 'http://board.test',
      MAIL_TAKEOVER_SECONDS: '1',
    };
    const first = await startMain(env);
    cleanups.push(async () => (first.child.exitCode === null && first.child.kill('SIGKILL'), first.exited));
    const { email, password } = await signedUp(first.url);
    await expect.poll(() => first.output().includes('mail not sent; retrying'), { timeout: 15_000 }).toBe(true);
    first.child.kill('SIGKILL');
    await first.exited;

    const mta = await smtp(placeholder.port);
    const second = await startMain(env);
    cleanups.push(async () => (second.child.exitCode === null && second.child.kill('SIGKILL'), second.exited));
    const confirm = await mta.next(email, /^Verify your email/, 30_000);
    const signedIn = await signedInAs(second.url, email, password);
    expect((await signedIn.post('/api/auth/verify-email', { token: tokenIn(confirm.body) })).status).toBe(200);
    expect(second.output()).toContain('mail taken over from the outbox: its holder stopped');
    expect(mta.received.filter((m) => m.to.includes(email))).toHaveLength(1);
  }, 90_000);
});

describe('the log transport', () => {
  it('is the default without SMTP_URL, and says so loudly at start', () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino(
      { level: 'info' },
      new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(JSON.parse(chunk.toString())), done()) }),
    );
    mailerFrom(loadConfig({}), { store: {} as never, keys }, logger);
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, msg: expect.stringMatching(/^MAIL GOES TO THE LOG ONLY \(no SMTP_URL\)/) }),
    ]);
  });
});
