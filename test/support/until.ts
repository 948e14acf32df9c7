// Polls a condition until it holds, for waits whose length a busy machine decides.

/** Resolves once `check` holds; rejects after `ms`, or with what `check` throws. */
export async function until(check: () => Promise<boolean> | boolean, ms = 20_000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50)))
    if (await check()) return;
  throw new Error('condition not reached');
}
