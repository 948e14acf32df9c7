// The server secret: SECRET_KEY when configured; otherwise, on the embedded store (one node),
// a random one kept beside the data in DATA_DIR/secret.key (mode 0600), created on first start.
// Losing it makes every password unverifiable, so it is never replaced once written.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from './config.js';

export async function serverSecret(config: Config): Promise<string> {
  if (config.secretKey) return config.secretKey;
  if (config.store.kind !== 'embedded') throw new Error('SECRET_KEY is required when STORE=mongo');
  const file = join(config.store.dataDir, 'secret.key');
  await mkdir(config.store.dataDir, { recursive: true });
  try {
    await writeFile(file, `${randomBytes(32).toString('base64url')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  const secret = (await readFile(file, 'utf8')).trim();
  if (secret.length < 32)
    throw new Error(`${file} holds no usable secret (32 characters or more); restore it from a backup`);
  return secret;
}
