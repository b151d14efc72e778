/**
 * Atomics.waitAsync (Node >= 16), typed here because the project's lib is
 * ES2023, which predates it. Note: a pending waitAsync does not keep a Node
 * event loop alive; callers that must stay alive hold a ref'd timer.
 */
const AtomicsWithWaitAsync = Atomics as unknown as {
  waitAsync(cells: Int32Array, index: number, value: number): { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> };
};

/** A promise that resolves once `cells[index]` is notified while holding `value`; null when it already differs. */
export function waitAsync(cells: Int32Array, index: number, value: number): Promise<unknown> | null {
  const r = AtomicsWithWaitAsync.waitAsync(cells, index, value);
  return r.async ? r.value : null;
}
