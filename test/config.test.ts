import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { entryArgs } from './support/built.js';

describe('config', () => {
  it('defaults to the embedded store on port 8080', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      store: { kind: 'embedded', dataDir: './data' },
      bodyLimitBytes: 256 * 1024,
      logLevel: 'info',
      redisUrl: undefined,
    });
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ STORE: 'postgres' }, 'STORE'],
    [{ STORE: 'mongo' }, 'MONGODB_URI'],
    [{ MONGODB_URI: 'http://x' }, 'MONGODB_URI'],
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ PUBLIC_URL: 'not a url' }, 'PUBLIC_URL'],
    [{ BODY_LIMIT_BYTES: '-1' }, 'BODY_LIMIT_BYTES'],
    [{ BOARD_RATE_SCALE: '0' }, 'BOARD_RATE_SCALE'],
    [{ BOARD_RATE_SCALE: 'lots' }, 'BOARD_RATE_SCALE'],
    [{ BCRYPT_ROUNDS: 'abc' }, 'BCRYPT_ROUNDS'],
    [{ BCRYPT_ROUNDS: '40' }, 'BCRYPT_ROUNDS'],
    [{ BCRYPT_ROUNDS: '3' }, 'BCRYPT_ROUNDS'],
    [{ BCRYPT_ROUNDS: '10.5' }, 'BCRYPT_ROUNDS'],
    [{ SECRET_KEY: 'too-short' }, 'SECRET_KEY'],
    [{ STORE: 'mongo', MONGODB_URI: 'mongodb://localhost' }, 'SECRET_KEY'],
  ])('names the bad variable in %o', (env, name) => {
    expect(() => loadConfig(env as NodeJS.ProcessEnv)).toThrow(ConfigError);
    expect(() => loadConfig(env as NodeJS.ProcessEnv)).toThrow(new RegExp(`^invalid configuration: ${name}: `));
  });

  it('reads BCRYPT_ROUNDS (default 12) and SECRET_KEY into the validated configuration', () => {
    expect(loadConfig({}).bcryptRounds).toBe(12);
    expect(loadConfig({ BCRYPT_ROUNDS: '10' }).bcryptRounds).toBe(10);
    expect(loadConfig({ SECRET_KEY: 'k'.repeat(32) }).secretKey).toBe('k'.repeat(32));
  });

  it('stops the process with one clear line naming the variable', () => {
    const run = spawnSync(process.execPath, entryArgs('src/main.ts'), {
      env: { PATH: process.env.PATH, PORT: 'eighty' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^invalid configuration: PORT: /)]);
  });
});
