// Which origins a browser may write and open sockets from. With PUBLIC_URL, its origin (what a
// proxy in front serves); without it, the loopback names at the port this node listens on, so
// `npm start` with any PORT works whether the page is opened at localhost, 127.0.0.1 or [::1].
// ALLOWED_ORIGINS adds more either way (a second hostname).
import type { Config } from '../config.js';

export function allowedOrigins(
  config: Pick<Config, 'publicUrl' | 'publicUrlGiven' | 'extraOrigins'>,
  port: number,
): Set<string> {
  const own = config.publicUrlGiven
    ? [new URL(config.publicUrl).origin]
    : ['localhost', '127.0.0.1', '[::1]'].map((host) => `http://${host}:${port}`);
  return new Set([...own, ...config.extraOrigins]);
}
