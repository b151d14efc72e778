import { describe, expect, it } from 'vitest';
import { explainStartFailure, remoteLaunchArgv, remoteShellCommand, shellQuote, splitCommand } from './remote-command.ts';

describe('remote launch command', () => {
  it('runs ssh without X11, terminal or prompts, with a connect timeout and keep-alives', () => {
    const { file, args } = remoteLaunchArgv(null, 'th1', 'CMD');
    expect(file).toBe('ssh');
    expect(args).toEqual(['-x', '-T', '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=10', '-o', 'ServerAliveInterval=5', '-o', 'ServerAliveCountMax=3', '--', 'th1', 'CMD']);
  });

  it('keeps --launcher-exec words; adds the ssh options only when the program is ssh', () => {
    expect(remoteLaunchArgv(['/usr/bin/ssh', '-F', 'c'], 'h', 'C').args.slice(0, 4)).toEqual(['-F', 'c', '-x', '-T']);
    expect(remoteLaunchArgv(['rsh'], 'h', 'C')).toEqual({ file: 'rsh', args: ['h', 'C'] });
  });

  it('quotes for a POSIX shell and splits --launcher-exec like one', () => {
    expect(shellQuote('/a/b.mjs')).toBe('/a/b.mjs');
    expect(shellQuote("it's here")).toBe(`'it'\\''s here'`);
    expect(splitCommand(`ssh -F "/tmp/my conf" -o 'A=b c'`)).toEqual(['ssh', '-F', '/tmp/my conf', '-o', 'A=b c']);
    expect(splitCommand('  ')).toBeInstanceOf(Error);
  });

  it('changes to the working directory (status 126 when missing) and execs node on the proxy', () => {
    const c = remoteShellCommand('/w d', '/usr/bin/node', ['/p/tsmpi-proxy.mjs']);
    expect(c).toMatch(/^cd '\/w d' 2>\/dev\/null \|\| \{ .* exit 126; \}; exec \/usr\/bin\/node \/p\/tsmpi-proxy\.mjs$/);
  });

  it.each([
    [255, 'Host key verification failed.', /does not know its host key.*known_hosts/],
    [255, 'root@th1: Permission denied (publickey).', /authentication refused.*key-based login/],
    [255, 'ssh: connect to host th1 port 22: No route to host', /unreachable: ssh: connect to host th1 port 22: No route to host; check/],
    [255, 'ssh: Could not resolve hostname th1: Name or service not known', /unreachable/],
    [127, 'sh: 1: exec: /opt/n/bin/node: not found', /\/usr\/bin\/node was not found there.*--prefix/],
    [1, "Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/x/tsmpi-proxy.mjs'", /tsmpi's proxy was not found there/],
    [126, 'tsmpi: no directory /w on host th1', /working directory does not exist there.*--wdir/],
    [3, '', /the remote launch exited with status 3 before its proxy connected back$/],
  ])('explains status %i with stderr %j', (status, stderr, expected) => {
    const line = explainStartFailure('th1', status, null, stderr, '/usr/bin/node');
    expect(line).toMatch(/^host th1: /);
    expect(line).toMatch(expected);
  });
});
