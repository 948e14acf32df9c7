// Scrapes a node's /metrics and parses it with parse-prometheus-text-format (a port of the
// Prometheus Python client's parser): a malformed exposition fails here, as it would fail a scrape.
import parsePrometheusTextFormat, { type Family, type Sample } from 'parse-prometheus-text-format';

export interface Scrape {
  families: Family[];
  family(name: string): Family;
  /** The one sample of `name` whose labels include `labels`, or undefined. */
  sample(name: string, labels?: Record<string, string>): Sample | undefined;
  /** Its value as a number (counters and gauges); 0 when absent. */
  value(name: string, labels?: Record<string, string>): number;
  /**
   * One series of a labelled histogram, read from the exposition's lines: the parser merges every
   * series of a histogram family into one (it keeps `le` and drops the other labels), so it is
   * used for label-free histograms only.
   */
  series(name: string, labels: Record<string, string>): { buckets: Record<string, number>; count: number; sum: number };
}

export async function scrape(port: number, token?: string): Promise<Scrape> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  if (res.status !== 200) throw new Error(`scrape: ${res.status}`);
  if (!/^text\/plain; version=0\.0\.4/.test(res.headers.get('content-type') ?? ''))
    throw new Error(`scrape: content type ${res.headers.get('content-type')}`);
  const text = await res.text();
  const families = parsePrometheusTextFormat(text);
  const family = (name: string) => {
    const found = families.find((f) => f.name === name);
    if (!found) throw new Error(`no metric family ${name}`);
    return found;
  };
  const sample = (name: string, labels: Record<string, string> = {}) =>
    family(name).metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  const series = (name: string, labels: Record<string, string>) => {
    const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
    const lines = text.split('\n').filter((l) => l.startsWith(`${name}_`) && wanted.every((w) => l.includes(w)));
    const read = (suffix: string) =>
      lines
        .filter((l) => l.startsWith(`${name}_${suffix}{`))
        .map((l) => ({ le: /le="([^"]+)"/.exec(l)?.[1], value: Number(l.slice(l.lastIndexOf(' ') + 1)) }));
    return {
      buckets: Object.fromEntries(read('bucket').map((b) => [b.le!, b.value])),
      count: read('count')[0]?.value ?? 0,
      sum: read('sum')[0]?.value ?? 0,
    };
  };
  return { families, family, sample, series, value: (name, labels) => Number(sample(name, labels)?.value ?? 0) };
}
