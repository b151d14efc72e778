/**
 * Test support (not exported from index.ts): waiting a given number of turns of
 * the event loop, for unit tests of code that runs one step per turn (the
 * blocking-call poll, the device's engine poll).
 */

/** Resolves after `n` turns of the event loop's check phase (setImmediate). */
export function turns(n: number): Promise<void> {
  return new Promise((resolve) => {
    let i = 0;
    const step = (): void => {
      if (++i >= n) resolve();
      else setImmediate(step);
    };
    setImmediate(step);
  });
}
