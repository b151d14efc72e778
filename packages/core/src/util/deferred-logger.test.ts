// deferredLogger: below its level nothing is made; the first record that passes makes the real
// logger once, children make theirs from it with their bindings, and records reach them in order.
import { describe, expect, it } from 'vitest';
import { deferredLogger, type Logger } from './deferred-logger.ts';

/** A stand-in real logger that records what reaches it (pure logic: no pino here). */
function recorder(out: string[], prefix = ''): Logger {
  const write = (level: string) => (o: unknown, msg?: string) => void out.push(`${prefix}${level} ${typeof o === 'string' ? o : `${JSON.stringify(o)} ${msg}`}`);
  return {
    level: 'trace', isLevelEnabled: () => true,
    child: (b) => recorder(out, `${prefix}${JSON.stringify(b)} `),
    fatal: write('fatal'), error: write('error'), warn: write('warn'), info: write('info'), debug: write('debug'), trace: write('trace'),
  };
}

describe('deferredLogger', () => {
  it('makes nothing for records below its level', () => {
    let made = 0;
    const log = deferredLogger('warn', () => { made++; return recorder([]); });
    log.info('a'); log.debug({ x: 1 }, 'b'); log.child({ mod: 'm' }).trace('c');
    expect(made).toBe(0);
    expect(log.isLevelEnabled('warn')).toBe(true);
    expect(log.isLevelEnabled('info')).toBe(false);
  });

  it('makes the real logger once, on the first record that passes, and children from it', () => {
    const out: string[] = [];
    let made = 0;
    const log = deferredLogger('info', () => { made++; return recorder(out); });
    const child = log.child({ mod: 'device' });
    child.warn({ peer: 2 }, 'lost');
    log.info('up');
    child.error('down');
    log.debug('dropped');
    expect(made).toBe(1);
    expect(out).toEqual(['{"mod":"device"} warn {"peer":2} lost', 'info up', '{"mod":"device"} error down']);
  });

  it("passes nothing at 'silent'", () => {
    let made = 0;
    const log = deferredLogger('silent', () => { made++; return recorder([]); });
    log.fatal('x');
    expect(log.isLevelEnabled('fatal')).toBe(false);
    expect(made).toBe(0);
  });
});
