// Which ring links init's lean warm-up uses (lean-warm-up.ts warmUpLinks): only where both ends
// published the same positive count, so that no message is sent to a rank that will not receive it.
import { describe, expect, it } from 'vitest';
import { warmUpLinks } from './lean-warm-up.ts';

describe('warmUpLinks', () => {
  it('names the ring neighbours', () => {
    expect(warmUpLinks(0, 4, 300, 300, 300)).toEqual({ left: 3, right: 1, fromLeft: 300, toRight: 300 });
    expect(warmUpLinks(3, 4, 300, 300, 300)).toEqual({ left: 2, right: 0, fromLeft: 300, toRight: 300 });
    expect(warmUpLinks(1, 2, 300, 300, 300)).toEqual({ left: 0, right: 0, fromLeft: 300, toRight: 300 });
  });

  it('skips a link whose other end published another count, nothing, or 0', () => {
    expect(warmUpLinks(1, 3, 300, 100, 300)).toMatchObject({ fromLeft: 0, toRight: 300 });
    expect(warmUpLinks(1, 3, 300, 300, null)).toMatchObject({ fromLeft: 300, toRight: 0 });
    expect(warmUpLinks(1, 3, 300, 0, 0)).toMatchObject({ fromLeft: 0, toRight: 0 });
  });

  it('uses no link where this rank publishes 0', () => {
    expect(warmUpLinks(0, 2, 0, 0, 0)).toMatchObject({ fromLeft: 0, toRight: 0 });
  });
});
