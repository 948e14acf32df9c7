// Each page's tab title and focus, from what the page shows: the title is the section the page
// marks current (a nav link with aria-current="page"), the page's heading (its h1, else its nav's
// label) and the product, "Tokens · Account · Agent Board"; it follows the heading as it loads
// (a board's name, an item's title). After a navigation in the page, focus moves to the new
// heading, as a page load would put a screen reader at the top, unless the person has moved focus
// on since.
import { effect } from '@preact/signals';
import { path } from '../router.js';

const PRODUCT = 'Agent Board';
/** How long after a navigation a heading that appears late (a page that loads first) still takes focus. */
const FOCUS_WITHIN_MS = 5_000;

const text = (el: Element | null | undefined) => el?.textContent?.replace(/\s+/g, ' ').trim() || null;

export function followHeadings(main: HTMLElement): void {
  let pending: { since: number; from: Element | null } | null = null;
  const update = () => {
    const h1 = main.querySelector('h1');
    const current = main.querySelector('nav [aria-current="page"]');
    const heading = text(h1) ?? main.querySelector('nav[aria-label]')?.getAttribute('aria-label') ?? null;
    const title = [text(current), heading, PRODUCT].filter((p, i, all) => p && all.indexOf(p) === i).join(' · ');
    if (document.title !== title) document.title = title;
    if (!pending || !h1) return;
    const { since, from } = pending;
    const active = document.activeElement;
    const untouched = !active || active === document.body || active === from || !active.isConnected;
    pending = null;
    if (Date.now() - since > FOCUS_WITHIN_MS || !untouched) return;
    if (!h1.hasAttribute('tabindex')) h1.setAttribute('tabindex', '-1');
    h1.focus({ preventScroll: true });
  };
  new MutationObserver(update).observe(main, {
    subtree: true,
    childList: true,
    characterData: true,
    attributes: true,
    attributeFilter: ['aria-current'],
  });
  let first = true;
  effect(() => {
    void path.value;
    if (!first) pending = { since: Date.now(), from: document.activeElement };
    first = false;
    queueMicrotask(update);
  });
}
