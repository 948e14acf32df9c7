// The hosted deployment's settings: each bad value stops the start with one line naming its
// variable, and the SMTP password never reaches the log.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { deriveKeys } from '../src/auth/keys.js';
import { mailerFrom } from '../src/mail/from-config.js';
import { openEmbeddedStore } from '../store/embedded/index.js';
import { TEST_SECRET } from './support/server.js';
import { tempDir } from './support/temp.js';

describe('hosted configuration', () => {
  it.each([
    [{ TRUSTED_PROXIES: '10.0.0.0/33' }, 'TRUSTED_PROXIES'],
    [{ TRUSTED_PROXIES: 'proxy.internal' }, 'TRUSTED_PROXIES'],
    [{ FORWARDED_HEADER: 'x-real-ip' }, 'FORWARDED_HEADER'],
    [{ SMTP_URL: 'mail.example.com:587' }, 'SMTP_URL'],
    [{ SMTP_URL: 'http://mail.example.com' }, 'SMTP_URL'],
    [{ MAIL_FROM: 'nobody' }, 'MAIL_FROM'],
    [{ MAIL_FROM: 'Board <board@example.com>\r\nBcc: x@y.z' }, 'MAIL_FROM'],
    [{ METRICS_PORT: 'nine' }, 'METRICS_PORT'],
    [{ METRICS_PORT: '8080' }, 'METRICS_PORT'],
    [{ METRICS_TOKEN: 'short' }, 'METRICS_TOKEN'],
    [{ PUBLIC_URL: 'ftp://board.example' }, 'PUBLIC_URL'],
    [{ MAIL_TAKEOVER_SECONDS: '0' }, 'MAIL_TAKEOVER_SECONDS'],
  ])('names the bad variable in %o', (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(`^invalid configuration: ${name}: `));
  });

  it('reads the settings', () => {
    const c = loadConfig({
      PORT: '9000',
      TRUSTED_PROXIES: '10.0.0.0/8, ::1, private',
      SMTP_URL: 'smtps://u:p@mail.example.com:465',
      MAIL_FROM: 'Board <board@example.com>',
      METRICS_PORT: '9464',
      METRICS_TOKEN: 't'.repeat(16),
    });
    expect(c.trustedProxies.entries).toEqual(['10.0.0.0/8', '::1', 'private']);
    expect(c.trustedProxies.trusts('172.17.0.1')).toBe(true);
    expect(c.trustedProxies.trusts('8.8.8.8')).toBe(false);
    expect(c.forwardedHeader).toBe('x-forwarded-for');
    expect(c.mail).toEqual({
      smtpUrl: 'smtps://u:p@mail.example.com:465',
      from: 'Board <board@example.com>',
      takeoverMs: 120_000,
    });
    expect(c.metrics).toEqual({ port: 9464, host: '0.0.0.0', token: 't'.repeat(16) });
    expect(loadConfig({ PUBLIC_URL: 'https://board.example.com' }).mail.from).toBe(
      'Agent board <no-reply@board.example.com>',
    );
    expect(loadConfig({}).metrics).toBeNull();
  });

  it('never logs the SMTP password, only the server it names', async () => {
    const lines: string[] = [];
    const logger = pino(
      { level: 'trace' },
      new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }),
    );
    const dir = await tempDir();
    const store = await openEmbeddedStore(dir.path);
    const mailer = mailerFrom(
      loadConfig({ SMTP_URL: 'smtp://user:s3cret-pa55@127.0.0.1:1' }),
      { store, keys: deriveKeys(TEST_SECRET) },
      logger,
      { baseDelayMs: 10, maxAttempts: 2 },
    );
    await mailer.send({ to: 'a@example.com', subject: 'hello', text: 'link #token=abc' });
    await expect.poll(() => lines.some((l) => l.includes('mail given up')), { timeout: 10_000 }).toBe(true);
    await mailer.close?.(100);
    await store.close();
    await dir.remove();
    expect(lines.join('')).toContain('smtp://127.0.0.1:1');
    expect(lines.join('')).not.toContain('s3cret-pa55');
    expect(lines.join('')).not.toContain('#token=abc');
  });
});
