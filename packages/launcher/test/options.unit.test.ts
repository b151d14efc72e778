/** mpiexec's command line parser, the process map and the help text (pure). */
import { describe, expect, it, vi } from 'vitest';
import { SETTINGS } from '@tsmpi/core/pmi';
import {
  helpAllText, helpText, main, nodeFlagsFor, parseArgs, parseHostList, parseHostfile, parseRankNodeFlags, placeRanks, rankCommand, type LaunchOptions,
} from '@tsmpi/launcher';

function run(argv: string[]): LaunchOptions {
  const r = parseArgs(argv);
  if (r.kind !== 'run') throw new Error(`expected run, got ${JSON.stringify(r)}`);
  return r.options;
}

describe('parseArgs', () => {
  it('stops at the program and keeps its arguments', () => {
    const o = run(['-n', '4', '-l', 'app.ts', '-n', '9', '--x']);
    expect(o.np).toBe(4);
    expect(o.tagOutput).toBe(true);
    expect(o.program).toBe('app.ts');
    expect(o.args).toEqual(['-n', '9', '--x']);
  });

  it('refuses a \':\' after the program (MPMD), which would otherwise reach it as an argument', () => {
    const r = parseArgs(['-n', '1', 'ocean.ts', '--grid', '2', ':', '-n', '4', 'atmos.ts']);
    expect(r).toEqual({ kind: 'error', message: "':' after ocean.ts starts another program (MPMD: mpiexec -n 1 a.ts : -n 4 b.ts), which this mpiexec does not run; start one program that branches on its rank, or start the others with COMM_WORLD.spawnMultiple" });
    expect(run(['app.ts', 'a:b', '::']).args).toEqual(['a:b', '::']);
  });

  it('--secure sets the setting secure=on that ranks get as TSMPI_SECURE, takes no value, and --help lists it', () => {
    expect(run(['--secure', 'app.ts']).settings.get('secure')).toBe('on');
    expect(run(['app.ts']).settings.has('secure')).toBe(false);
    expect(parseArgs(['--secure=yes', 'app.ts'])).toEqual({ kind: 'error', message: '--secure takes no value' });
    expect(SETTINGS.find((r) => r.name === 'secure')?.env).toBe('TSMPI_SECURE');
    expect(helpText()).toMatch(/--secure\s+encrypt and authenticate every connection between hosts/);
  });

  it('--nameserver FILE names tsmpi-nameserver\'s file (docs/adr/0046), needs a value, and --help lists it', () => {
    expect(run(['--nameserver', '/run/user/1/tsmpi-nameserver', 'app.ts']).nameserverFile).toBe('/run/user/1/tsmpi-nameserver');
    expect(run(['--nameserver=ns', 'app.ts']).nameserverFile).toBe('ns');
    expect(run(['app.ts']).nameserverFile).toBeNull();
    expect(parseArgs(['--nameserver='])).toEqual({ kind: 'error', message: '--nameserver: expected the file tsmpi-nameserver wrote' });
    expect(parseArgs(['--nameserver'])).toEqual({ kind: 'error', message: '--nameserver needs a value: --nameserver FILE' });
    expect(helpText()).toMatch(/--nameserver FILE\s+publishName\/lookupName between jobs/);
    expect(helpAllText()).toMatch(/TSMPI_NAMESERVER=FILE/);
  });

  it('accepts -np, --opt=value, repeated --env and --', () => {
    const o = run(['-np', '2', '--timeout=1.5', '--env', 'A=1', '--env', 'B=x=y', '--', '-weird-name']);
    expect(o.np).toBe(2);
    expect(o.timeoutSec).toBe(1.5);
    expect(o.env).toEqual([['A', '1'], ['B', 'x=y']]);
    expect(o.program).toBe('-weird-name');
  });

  it('validates every setting flag against the settings table', () => {
    const o = run(['--channels', '3', '--matching', 'global', '--refcount', 'gc', '--progress', 'threads', '--endpoints', '2', '--log-level', 'debug', 'p.ts']);
    expect(Object.fromEntries(o.settings)).toEqual({ channels: 3, matching: 'global', refcount: 'gc', progress: 'threads', endpoints: 2, logLevel: 'debug' });
    for (const row of SETTINGS.filter((r) => r.flag !== null)) {
      const r = parseArgs([row.flag!, 'not-a-valid-value', 'p.ts']);
      if (row.kind.type === 'string') continue;
      expect(r.kind).toBe('error');
      if (r.kind === 'error') expect(r.message).toMatch(new RegExp(`^${row.flag} not-a-valid-value: expected `));
    }
  });

  it.each([
    [['-n'], /-n needs a value/],
    [['-n', '0', 'p'], /-n 0: expected an integer from 1/],
    [['--env', 'NOEQ', 'p'], /--env NOEQ: expected KEY=VALUE/],
    [['--launcher', 'pbs', 'p'], /expected one of fork, ssh, slurm/],
    [['--iface', 'eth 0', 'p'], /--iface eth 0: expected an interface name, an address or an IPv4 CIDR/],
    [['-x', '1BAD', 'p'], /-x 1BAD: expected KEY or KEY=VALUE/],
    [['--port-range', '5000', 'p'], /--port-range 5000: expected LO-HI/],
    [['--port-range', '6000-5000', 'p'], /expected LO-HI with 1 <= LO <= HI <= 65535/],
    [['--prefix', 'relative/dir', 'p'], /--prefix relative\/dir: expected an absolute directory/],
    [['--launcher-exec', "ssh 'unbalanced", 'p'], /unbalanced quote/],
    [['--wdir', '/does/not/exist', 'p'], /not an existing directory/],
    [['--hosts', 'a:0', 'p'], /slots must be from 1 to 65536/],
    [['--hosts', 'a:70000', 'p'], /slots must be from 1 to 65536/],
    [['--hosts', '-Eevil.log', 'p'], /"-Eevil.log" is not a host: a host name may not begin with "-"/],
    [['--hosts', 'a,-oProxyCommand=touch:2', 'p'], /may not begin with "-"/],
    [['-l=1', 'p'], /unknown option/],
    [['--dry-run=yes', 'p'], /takes no value/],
  ])('%j is an error', (argv, message) => {
    const r = parseArgs(argv);
    expect(r.kind).toBe('error');
    if (r.kind === 'error') expect(r.message).toMatch(message);
  });

  it('--dashboard takes an optional port only as --dashboard=PORT, and --dashboard-host needs it', () => {
    const run = (argv: string[]) => {
      const r = parseArgs(argv);
      if (r.kind !== 'run') throw new Error(r.kind === 'error' ? r.message : r.kind);
      return r.options;
    };
    expect(run(['a.js']).dashboardPort).toBeNull();
    expect(run(['--dashboard', 'a.js'])).toMatchObject({ dashboardPort: 0, dashboardHost: null, program: 'a.js' });
    expect(run(['--dashboard=8123', 'a.js']).dashboardPort).toBe(8123);
    expect(run(['--dashboard', '--dashboard-host', '0.0.0.0', 'a.js']).dashboardHost).toBe('0.0.0.0');
    for (const bad of ['--dashboard=70000', '--dashboard=x', '--dashboard=-1']) {
      const r = parseArgs([bad, 'a.js']);
      expect(r.kind === 'error' && r.message).toMatch(/^--dashboard=.*expected a port from 1 to 65535/);
    }
    expect(parseArgs(['--dashboard-host', '0.0.0.0', 'a.js'])).toEqual({ kind: 'error', message: '--dashboard-host needs --dashboard' });
    // --dashboard 8123 would take 8123 as the program: the port goes with '='.
    expect(run(['--dashboard', '8123', 'a.js'])).toMatchObject({ dashboardPort: 0, program: '8123' });
  });

  it('recognizes help', () => {
    expect(parseArgs(['--help']).kind).toBe('help');
    expect(parseArgs(['-n', '2', '-h']).kind).toBe('help');
  });

  it('accepts --iface names, addresses and CIDRs (resolved later, on each host)', () => {
    expect(run(['--iface', 'lo', 'p']).iface).toBe('lo');
    expect(run(['--iface', '127.0.0.0/8', 'p']).iface).toBe('127.0.0.0/8');
    expect(run(['--iface', 'eth1', 'p']).iface).toBe('eth1');
    expect(run(['--iface', '198.18.0.0/15', 'p']).iface).toBe('198.18.0.0/15');
  });

  it('parses the multi-host options: -x, --launcher-exec/--rsh, --prefix, --port-range, --launcher ssh', () => {
    const o = run(['-x', 'A', '-x', 'B=2', '--rsh', 'ssh -F "my conf"', '--prefix', '/opt/node', '--port-range', '5000-5100', '--launcher', 'ssh', 'p']);
    expect(o.envFrom).toEqual(['A']);
    expect(o.env).toEqual([['B', '2']]);
    expect(o.launcherExec).toEqual(['ssh', '-F', 'my conf']);
    expect(o.prefix).toBe('/opt/node');
    expect(o.portRange).toEqual({ lo: 5000, hi: 5100 });
    expect(o.launcher).toBe('ssh');
    expect(run(['--launcher-exec', 'rsh', 'p']).launcherExec).toEqual(['rsh']);
  });

  it('records whether -n and --launcher were given (inside Slurm both default from the allocation)', () => {
    const d = run(['p']);
    expect([d.np, d.hasExplicitNp, d.launcher, d.hasExplicitLauncher]).toEqual([1, false, 'ssh', false]);
    const o = run(['-n', '1', '--launcher', 'slurm', 'p']);
    expect([o.np, o.hasExplicitNp, o.launcher, o.hasExplicitLauncher]).toEqual([1, true, 'slurm', true]);
  });
});

describe('process map', () => {
  it('puts everything on the default host without --hosts', () => {
    expect(placeRanks(3, null, null, 'me')).toEqual([
      { rank: 0, host: 'me', localRank: 0, localSize: 3 },
      { rank: 1, host: 'me', localRank: 1, localSize: 3 },
      { rank: 2, host: 'me', localRank: 2, localSize: 3 },
    ]);
  });

  it('fills hosts in blocks of their slots and wraps around', () => {
    const hosts = parseHostList('a:2,b');
    if (hosts instanceof Error) throw hosts;
    expect(placeRanks(5, hosts, null, 'me').map((p) => `${p.host}${p.localRank}/${p.localSize}`)).toEqual(['a0/4', 'a1/4', 'b0/1', 'a2/4', 'a3/4']);
    expect(placeRanks(4, hosts, 1, 'me').map((p) => p.host)).toEqual(['a', 'b', 'a', 'b']);
  });

  it('gives Node ranks single-threaded GC only where a host runs more ranks than it has cores', () => {
    expect(nodeFlagsFor(placeRanks(3, null, null, 'me'), 2)).toEqual(['--single-threaded-gc']);
    expect(nodeFlagsFor(placeRanks(2, null, null, 'me'), 2)).toEqual([]);
    const hosts = parseHostList('a:2,b');
    if (hosts instanceof Error) throw hosts;
    expect(nodeFlagsFor(placeRanks(3, hosts, null, 'me'), 2)).toEqual([]); // a runs 2, b runs 1
    expect(nodeFlagsFor(placeRanks(5, hosts, null, 'me'), 2)).toEqual(['--single-threaded-gc']); // a runs 4
    expect(rankCommand('app.ts', ['x'], 'file:///tsx', ['--single-threaded-gc']).args.slice(0, 2)).toEqual(['--single-threaded-gc', '--conditions=@tsmpi/source']);
    expect(rankCommand('app.sh', ['x'], 'file:///tsx', ['--single-threaded-gc']).args).toEqual(['x']);
  });

  it('puts the rankNodeFlags setting on Node ranks\' command line, before ours', () => {
    expect(parseRankNodeFlags('none')).toEqual([]);
    expect(parseRankNodeFlags('')).toEqual([]);
    expect(parseRankNodeFlags(' --interrupt-budget=4096  --max-semi-space-size=16 ')).toEqual(['--interrupt-budget=4096', '--max-semi-space-size=16']);
    const bad = parseRankNodeFlags('--maglev app.js');
    expect(bad).toBeInstanceOf(Error);
    expect((bad as Error).message).toMatch(/TSMPI_RANK_NODE_FLAGS.*'app\.js' is not a flag/);
    expect(nodeFlagsFor(placeRanks(3, null, null, 'me'), 2, ['--maglev'])).toEqual(['--maglev', '--single-threaded-gc']);
    expect(nodeFlagsFor(placeRanks(2, null, null, 'me'), 2, ['--maglev'])).toEqual(['--maglev']);
  });

  it('refuses a hostfile line beginning with "-"; --dry-run shows "--" before the host in the ssh command', async () => {
    expect(parseHostfile('node1\n-oProxyCommand=x slots=2\n', 'f')).toEqual(new Error('--hostfile f line 2: "-oProxyCommand=x slots=2" is not a host: a host name may not begin with "-"'));
    const out: string[] = [];
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => out.push(String(chunk)) > 0);
    try {
      expect(await main(['-n', '2', '--hosts', 'other-host-of-test:2', '--dry-run', 'app.ts'], {})).toBe(0);
      expect(out.join('')).toMatch(/proxy: ssh -x -T .* -o ServerAliveCountMax=3 -- other-host-of-test /);
    } finally {
      write.mockRestore();
    }
  });

  it('shows the rankNodeFlags in --dry-run\'s command, and refuses a word that is not a flag', async () => {
    const out: string[] = [];
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => out.push(String(chunk)) > 0);
    const errWrite = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => out.push(String(chunk)) > 0);
    try {
      expect(await main(['-n', '2', '--dry-run', 'app.ts'], { TSMPI_RANK_NODE_FLAGS: '--interrupt-budget=4096' })).toBe(0);
      expect(out.join('')).toMatch(/^command: \S*node --interrupt-budget=4096 (--single-threaded-gc )?--conditions=@tsmpi\/source /m);
      out.length = 0;
      expect(await main(['-n', '2', '--dry-run', 'app.ts'], { TSMPI_RANK_NODE_FLAGS: 'oops' })).toBe(2);
      expect(out.join('')).toMatch(/'oops' is not a flag/);
    } finally {
      write.mockRestore();
      errWrite.mockRestore();
    }
  });

  it('TSMPI_NAMESERVER names the name server\'s file as --nameserver does (which wins); a missing one is status 2 before any rank', async () => {
    const out: string[] = [];
    const errWrite = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => out.push(String(chunk)) > 0);
    const program = 'packages/core/test/programs/name-jobs.ts';
    try {
      expect(await main(['-n', '1', program, 'gone', '/tmp', 'x'], { TSMPI_NAMESERVER: '/nonexistent/names-env' })).toBe(2);
      expect(out.join('')).toMatch(/^mpiexec: TSMPI_NAMESERVER=\/nonexistent\/names-env: does not exist/m);
      out.length = 0;
      expect(await main(['-n', '1', '--nameserver', '/nonexistent/names-flag', program, 'gone', '/tmp', 'x'], { TSMPI_NAMESERVER: '/nonexistent/names-env' })).toBe(2);
      expect(out.join('')).toMatch(/^mpiexec: --nameserver \/nonexistent\/names-flag: does not exist/m);
    } finally {
      errWrite.mockRestore();
    }
  });

  it('reads hostfiles with comments and slots=', () => {
    expect(parseHostfile('# hosts\nnode1 slots=4\n\nnode2:2 # two\n', 'f')).toEqual([
      { host: 'node1', slots: 4 },
      { host: 'node2', slots: 2 },
    ]);
    expect(parseHostfile('bad host name!\n', 'f')).toBeInstanceOf(Error);
  });
});

describe('help', () => {
  it('lists every setting flag with its environment variable, in --help and --help-all', () => {
    for (const text of [helpText(), helpAllText()]) {
      for (const row of SETTINGS.filter((r) => r.flag !== null)) {
        expect(text).toContain(row.flag!);
        expect(text).toContain(row.env);
      }
    }
  });

  it('--help fits a screen, gives each setting flag its one-line brief and names nothing outside the repository', () => {
    const text = helpText();
    expect(text.split('\n').length).toBeLessThanOrEqual(40);
    for (const row of SETTINGS.filter((r) => r.flag !== null)) {
      expect(row.brief, `${row.name} has a brief for --help`).toBeTruthy();
      expect(text).toContain(row.brief!);
      expect(text, 'the whole story is for --help-all').not.toContain(row.doc);
    }
    // Issue 39: neither text sends a user to the design records (ADRs, papers): they are for developers.
    for (const text2 of [text, helpAllText()]) {
      expect(text2).not.toMatch(/papers?\b|docs\/adr|\bADR\b/i);
    }
    expect(parseArgs(['--help-all'])).toEqual({ kind: 'help', all: true });
    expect(parseArgs(['-h'])).toEqual({ kind: 'help', all: false });
  });
});
