// Loading what a page shows: once on mount (again on reload()), and the account's boards.
import { useEffect, useState } from 'preact/hooks';
import type { Reply } from '@agent-board/client';
import { client } from '../api.js';
import type { ProjectSummary } from '../types.js';

/** Loads on mount (and on reload()); keeps the last data while reloading. */
export function useLoad<T>(load: () => Promise<T>) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [version, setVersion] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (d) => live && (setData(d), setError(null)),
      (e: unknown) => live && setError(e),
    );
    return () => void (live = false);
  }, [version]);
  return { data, error, reload: () => setVersion((v) => v + 1) };
}

/** Every board of the account (the list is paginated; follow the cursor, with a bound). */
export async function allProjects(): Promise<ProjectSummary[]> {
  const out: ProjectSummary[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 20; page++) {
    // Annotated: `cursor` is read back from the answer in the same loop.
    const res: Reply<'/api/projects', 'get'> = await client.get('/api/projects', {
      params: { query: { limit: '200', ...(cursor && { cursor }) } },
    });
    out.push(...res.projects);
    cursor = res.pagination.nextCursor;
    if (!cursor) break;
  }
  return out;
}
