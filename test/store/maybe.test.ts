import { describe, expect, it } from 'vitest';
import { andThen, both, orElse, run, type Maybe } from '../../store/ports/maybe.js';

function* steps(a: Maybe<number>, b: Maybe<number>, seen: string[]): Generator<unknown, number, unknown> {
  const x = (yield a) as number;
  seen.push(`a=${x}`);
  let y: number;
  try {
    y = (yield b) as number;
  } catch (e) {
    seen.push(`caught ${(e as Error).message}`);
    y = -1;
  }
  seen.push(`b=${y}`);
  return x + y;
}

describe('Maybe', () => {
  it('runs steps whose every value is at hand without a promise', () => {
    const seen: string[] = [];
    const result = run(steps(1, 2, seen));
    expect(result).toBe(3); // a number, not a promise
    expect(seen).toEqual(['a=1', 'b=2']);
  });

  it('turns into a promise at the first step that must wait, and runs the rest after it', async () => {
    const seen: string[] = [];
    const result = run(steps(1, Promise.resolve(5), seen));
    expect(result).toBeInstanceOf(Promise);
    expect(seen).toEqual(['a=1']); // nothing after the wait ran yet
    expect(await result).toBe(6);
    expect(seen).toEqual(['a=1', 'b=5']);
  });

  it('throws a rejection into the steps where they waited, as await would', async () => {
    const seen: string[] = [];
    expect(await run(steps(Promise.resolve(2), Promise.reject(new Error('gone')), seen))).toBe(1);
    expect(seen).toEqual(['a=2', 'caught gone', 'b=-1']);
  });

  it('throws now what the steps throw before any wait, and rejects with what they throw after one', async () => {
    function* failing(wait: boolean): Generator<unknown, number, unknown> {
      if (wait) yield Promise.resolve(0);
      throw new Error('refused');
    }
    expect(() => run(failing(false))).toThrow('refused');
    await expect(run(failing(true))).rejects.toThrow('refused');
  });

  it('andThen and both answer now when their values are at hand, and later otherwise', async () => {
    expect(andThen(2, (x) => x * 3)).toBe(6);
    expect(both(1, 'a')).toEqual([1, 'a']);
    const later = andThen(both(1, Promise.resolve('b')), ([n, s]) => `${s}${n}`);
    expect(later).toBeInstanceOf(Promise);
    expect(await later).toBe('b1');
  });

  it('orElse gives the fallback for a throw and for a rejection alike', async () => {
    expect(
      await orElse(() => {
        throw new Error('now');
      }, 'fallback'),
    ).toBe('fallback');
    expect(await orElse(() => Promise.reject(new Error('later')), 'fallback')).toBe('fallback');
    expect(await orElse(() => 7, 'fallback')).toBe(7);
  });

  it('can be imported dynamically (no export named then, which would make the module a thenable)', async () => {
    const module = await import('../../store/ports/maybe.js');
    expect(typeof module.run).toBe('function');
  });
});
