import { describe, expect, it } from 'vitest';
import { formatLogLine } from './log-line.ts';

describe('formatLogLine', () => {
  it('writes a rank\'s record as one line: who, level, message, then its own fields', () => {
    const rec = { level: 40, time: 1, rank: 1, pid: 9, host: 'h', mod: 'transport', peer: 2, code: 'TSMPI_ERR_PEER_CLOSED', reason: 'channel 0: ended', msg: 'peer lost' };
    expect(formatLogLine(JSON.stringify(rec))).toBe('tsmpi: rank 1: warn: peer lost (mod=transport, peer=2, code=TSMPI_ERR_PEER_CLOSED, reason="channel 0: ended")\n');
  });

  it('names mpiexec by its logger name, shows an error by its message and keeps the last of repeated keys (the innermost child\'s)', () => {
    const line = '{"level":50,"time":1,"name":"mpiexec","mod":"a","mod":"b","err":{"type":"Error","message":"bad thing","stack":"..."},"msg":"wire-up service error"}';
    expect(formatLogLine(line)).toBe('mpiexec: error: wire-up service error (mod=b, err="bad thing")\n');
  });

  it('passes a line that is not a JSON object through unchanged', () => {
    expect(formatLogLine('plain text')).toBe('plain text\n');
    expect(formatLogLine('[1,2]')).toBe('[1,2]\n');
  });
});
