// History-API routing: the path is a signal; links and navigate() push state without a reload.
import { signal } from '@preact/signals';

export const path = signal(location.pathname + location.search);

/**
 * Goes to `to` (path and query) in the page. A `hash` (`#spec`) goes into the address before the
 * path signal moves, so the page it opens reads it; on the same page only the hash changes, told
 * by a hashchange event.
 */
export function navigate(to: string, replace = false, hash = ''): void {
  if (to === path.value) {
    if (hash && hash !== location.hash) {
      history.pushState(null, '', to + hash);
      dispatchEvent(new HashChangeEvent('hashchange'));
    }
    return;
  }
  history[replace ? 'replaceState' : 'pushState'](null, '', to + hash);
  path.value = to;
  window.scrollTo(0, 0);
}

addEventListener('popstate', () => {
  path.value = location.pathname + location.search;
});

/** Same-origin link clicks route in the page (modifier clicks open a tab as usual). */
addEventListener('click', (event) => {
  const a = (event.target as Element | null)?.closest?.('a');
  if (
    !a ||
    event.defaultPrevented ||
    event.button !== 0 ||
    event.metaKey ||
    event.ctrlKey ||
    event.shiftKey ||
    a.target
  )
    return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || url.pathname.startsWith('/api/') || url.pathname.startsWith('/docs/')) return;
  event.preventDefault();
  navigate(url.pathname + url.search, false, url.hash);
});

/** The params of `pattern` (e.g. /boards/:id) in the current path, or null. */
export function match(pattern: string, current: string = path.value): Record<string, string> | null {
  const [pathname] = current.split('?');
  const want = pattern.split('/');
  const got = (pathname ?? '').replace(/\/$/, '').split('/');
  if (want.length !== got.length && !(pattern === '/' && pathname === '/')) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i]!.startsWith(':')) params[want[i]!.slice(1)] = decodeURIComponent(got[i]!);
    else if (want[i] !== got[i]) return null;
  }
  return params;
}

export const queryParam = (name: string): string | null =>
  new URLSearchParams(path.value.split('?')[1] ?? '').get(name);
