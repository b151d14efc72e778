// testlist: { file: 'proxy.it.test.ts', np: [3, 4, 5] } — real mpiexec, real proxies and ranks on this machine.
/**
 * The per-host proxy path without ssh: hosts whose names are not this
 * machine's are started through fixtures/fake-rsh.sh, which runs the proxy
 * command here as ssh would run it there. Everything but ssh itself is real:
 * the proxy's link and heartbeats, its ranks, output relay, exits, signals,
 * failure of a host, no process left behind. The same promises over real
 * ssh and namespaced hosts are in multihost.it.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { Job } from '../src/job.ts';
import { loadProxyBackends } from '../src/launchers.ts';
import { parseArgs } from '../src/options.ts';
import { placeRanks } from '../src/process-map.ts';
import { tsxLoaderUrl, withTransport } from '../src/rank-command.ts';
import { FIXTURES, REPO_ROOT, runMpiexec, type MpiexecResult } from './run-mpiexec.ts';
import { cmdline, descendants, envOf, waitGone } from './process-tree.ts';

const RSH = ['--launcher-exec', `${FIXTURES}/fake-rsh.sh`];
// The ranks list their listening ports with ss (iproute2); without it the port-range test cannot look.
const hasSs = spawnSync('sh', ['-c', 'command -v ss'], { stdio: 'ignore' }).status === 0;
if (!hasSs) console.warn('[proxy.it] skipping the --port-range test: ss not found (apt-get install iproute2)');
const MH_RANK = `${FIXTURES}/mh-rank.ts`;
const PMI_RANK = `${FIXTURES}/pmi-rank.mjs`;

interface RankLine {
  rank: number;
  size: number;
  host: string;
  listen: string;
  ring: number;
  sum: number;
  a2a: number[];
  extra: string | null;
  fromX: string | null;
  ports: number[];
  pmi: string;
}

function rankLines(stdout: string): RankLine[] {
  return stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as RankLine).sort((a, b) => a.rank - b.rank);
}

/** Runs mpiexec while recording every process it started (polled), and checks that none is left afterwards. */
async function runTracked(args: string[], opts: Parameters<typeof runMpiexec>[1] = {}): Promise<MpiexecResult & { seen: number[] }> {
  const seen = new Set<number>();
  let root = 0;
  const poll = setInterval(() => {
    if (root !== 0) for (const p of descendants(root)) seen.add(p);
  }, 100);
  const onOutput = opts.onOutput;
  const r = await runMpiexec(args, {
    ...opts,
    onStart: (pid: number) => {
      root = pid;
    },
    ...(onOutput === undefined ? {} : { onOutput: { text: onOutput.text, action: (pid: number) => { for (const p of descendants(pid)) seen.add(p); onOutput.action(pid); } } }),
  });
  clearInterval(poll);
  await waitGone([...seen], 10_000);
  return { ...r, seen: [...seen] };
}

describe('mpiexec with per-host proxies (fake remote shell)', () => {
  it('sends stdin to rank 0 on a proxied host, whole and in order, with its end', async () => {
    // 4 MiB: many times the stdin window, so the relay pauses and resumes on acknowledgements.
    const input = Array.from({ length: 65536 }, (_, i) => `line ${String(i).padStart(8, '0')} ${'y'.repeat(48)}\n`).join('');
    const digest = createHash('sha256').update(input).digest('hex');
    const r = await runTracked(['-n', '2', '--hosts', 'fakeh1:1,localhost:1', ...RSH, PMI_RANK, 'stdin-digest'], { input, deadlineMs: 120_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`rank 0 on fakeh1 read ${Buffer.byteLength(input)} bytes sha256 ${digest}`);
  }, 130_000);

  it('ends a remote rank 0\'s stdin when mpiexec\'s is empty', async () => {
    const r = await runTracked(['-n', '2', '--hosts', 'fakeh1:1,localhost:1', ...RSH, PMI_RANK, 'stdin'], { input: '' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('rank 0 read: ');
  });

  it('runs ring, allreduce and alltoall over this machine and two proxied hosts, with -l tags, --env and -x', async () => {
    const r = await runTracked(['-n', '5', '-l', '--hosts', 'localhost:1,fakeh1:2,fakeh2:2', ...RSH, '--env', 'EXTRA=e', '-x', 'MH_FROM_X', MH_RANK], {
      env: { MH_FROM_X: 'from-mpiexec' },
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(5);
    for (const l of lines) expect(l).toMatch(/^\[(\d)\] \{.*\}$/);
    const ranks = rankLines(lines.map((l) => l.replace(/^\[\d\] /, '')).join('\n'));
    expect(ranks.map((x) => x.host)).toEqual(['localhost', 'fakeh1', 'fakeh1', 'fakeh2', 'fakeh2']);
    for (const x of lines) expect(x.startsWith(`[${JSON.parse(x.replace(/^\[\d\] /, '')).rank}] `)).toBe(true);
    expect(ranks[0]!.ring).toBe(10);
    for (const x of ranks) {
      expect(x.sum).toBe(10);
      expect(x.a2a).toEqual([0, 1, 2, 3, 4].map((s) => s * 100 + x.rank));
      expect(x.extra).toBe('e');
      expect(x.fromX).toBe('from-mpiexec');
      expect(x.listen).not.toMatch(/^127\./); // a multi-host job never advertises loopback
    }
  });

  it.skipIf(!hasSs)(`keeps every listening port of the job inside --port-range${hasSs ? '' : ' (skipped: ss not found)'}`, async () => {
    const r = await runTracked(['-n', '4', '--hosts', 'localhost:2,fakeh1:2', ...RSH, '--port-range', '41200-41260', MH_RANK]);
    expect(r.status).toBe(0);
    const ranks = rankLines(r.stdout);
    expect(ranks).toHaveLength(4);
    for (const x of ranks) {
      const pmiPort = Number(/:(\d+)$/.exec(x.pmi)![1]);
      expect(pmiPort).toBeGreaterThanOrEqual(41200);
      expect(pmiPort).toBeLessThanOrEqual(41260);
      expect(x.ports.length).toBeGreaterThan(0);
      for (const p of x.ports) {
        expect(p).toBeGreaterThanOrEqual(41200);
        expect(p).toBeLessThanOrEqual(41260);
      }
    }
  });

  it('hands every line of proxied ranks to a slow reader (backpressure through the link), without a false host loss', async () => {
    // 3 x 4000 lines of 400 bytes, read 100 ms apart: when the ranks are done, megabytes are
    // still queued on the link, and mpiexec reads them only as fast as its reader takes its
    // output. The proxy must wait for that (it used to exit 1 s after its last rank: lost lines,
    // "lost its proxy"). About 20 s at load 60 (2 cores); the deadline ends a stall well inside
    // the test's own timeout, so a stall is reported with what arrived, not as a bare timeout.
    const r = await runTracked(['-n', '3', '--hosts', 'localhost,fakeh1:2', ...RSH, PMI_RANK, 'lines', '4000', '400'], { slowReaderMs: 100, deadlineMs: 100_000 });
    const perRank = [0, 0, 0];
    for (const m of r.stdout.matchAll(/^R(\d):\d+:x+$/gm)) perRank[Number(m[1])]!++;
    const seen = `lines per rank ${JSON.stringify(perRank)}, exit ${r.status}, stderr:\n${r.stderr}`;
    expect(r.timedOut, `mpiexec still ran after 100 s and was killed: ${seen}`).toBe(false);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(perRank).toEqual([4000, 4000, 4000]);
  }, 130_000);

  it('waits as long as mpiexec takes to read the last output of a finished host (a reader 1 s apart)', async () => {
    // Read 1 s apart, mpiexec takes longer than 30 s to read what the proxy still holds when its
    // ranks are done: ws's own close timeout (30 s) used to cut the link then (lines lost, "lost
    // its proxy"). About 80 s, nearly all of it the reader's pauses.
    const r = await runTracked(['-n', '3', '--hosts', 'localhost,fakeh1:2', ...RSH, PMI_RANK, 'lines', '4000', '400'], { slowReaderMs: 1000, deadlineMs: 200_000 });
    const perRank = [0, 0, 0];
    for (const m of r.stdout.matchAll(/^R(\d):\d+:x+$/gm)) perRank[Number(m[1])]!++;
    expect(r.timedOut, `mpiexec still ran after 200 s and was killed: lines per rank ${JSON.stringify(perRank)}, stderr:\n${r.stderr}`).toBe(false);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(perRank).toEqual([4000, 4000, 4000]);
  }, 230_000);

  it('ends the job when a rank on a proxied host fails, naming rank and host', async () => {
    const r = await runTracked(['-n', '4', '--hosts', 'localhost:2,fakeh1:2', ...RSH, PMI_RANK, 'exit-code', '3', '7']);
    expect(r.status).toBe(7);
    expect(r.stderr).toMatch(/^mpiexec: rank 3 \(host fakeh1, pid \d+\) exited with code 7; aborting the job \(4 processes\)$/m);
  });

  it('ends the job when a proxy is killed -9, naming the host and the ranks lost; nothing is left', async () => {
    const r = await runTracked(['-n', '4', '--hosts', 'localhost:2,fakeh1:2', ...RSH, MH_RANK, '600000'], {
      onOutput: {
        text: 'rank 3 sleeping',
        action: (pid) => {
          const proxy = descendants(pid).find((p) => cmdline(p).includes('tsmpi-proxy.mjs'));
          if (proxy !== undefined) process.kill(proxy, 'SIGKILL');
        },
      },
      deadlineMs: 60_000,
    });
    expect(r.timedOut).toBe(false);
    expect(r.status).toBe(255);
    expect(r.stderr).toMatch(/^mpiexec: host fakeh1: lost its proxy .*; lost ranks 2, 3; aborting the job \(4 processes\)$/m);
  });

  it('forwards Ctrl-C to the ranks of every host', async () => {
    const r = await runTracked(['-n', '3', '--hosts', 'localhost,fakeh1:2', ...RSH, MH_RANK, '600000'], {
      onOutput: { text: 'rank 2 sleeping', action: (pid) => process.kill(pid, 'SIGINT') },
      deadlineMs: 60_000,
    });
    expect(r.status).toBe(130);
    expect(r.stderr).toMatch(/received SIGINT; forwarding it to 3 processes/);
  });

  it('leaves no proxy and no rank behind when mpiexec itself is killed -9', async () => {
    let ranks: number[] = [];
    const r = await runTracked(['-n', '3', '--hosts', 'localhost,fakeh1:2', ...RSH, MH_RANK, '600000'], {
      onOutput: {
        text: 'rank 2 sleeping',
        action: (pid) => {
          ranks = descendants(pid).filter((p) => envOf(p, 'TSMPI_HOST') === 'fakeh1');
          process.kill(pid, 'SIGKILL');
        },
      },
      deadlineMs: 60_000,
    });
    expect(r.signal).toBe('SIGKILL');
    expect(ranks.length).toBeGreaterThanOrEqual(2); // the remote ranks (and their tsx helpers) were found
    await waitGone(ranks, 15_000); // the proxy saw its link and stdin end and killed them
  });

  it('says which host is unreachable and what to do', async () => {
    const r = await runTracked(['-n', '3', '--hosts', 'localhost,fakeh1:2', ...RSH, PMI_RANK], {
      env: { FAKE_RSH_FAIL: '255:ssh: connect to host fakeh1 port 22: No route to host' },
    });
    expect(r.status).toBe(255);
    expect(r.stderr).toMatch(/^mpiexec: host fakeh1: unreachable: ssh: connect to host fakeh1 port 22: No route to host; check .*; ranks never started: 1, 2; aborting the job \(3 processes\)$/m);
  });

  it('says when node is missing on a host (status 127)', async () => {
    const r = await runTracked(['-n', '2', '--hosts', 'localhost,fakeh1', ...RSH, '--prefix', '/nonexistent', PMI_RANK]);
    expect(r.status).toBe(127);
    expect(r.stderr).toMatch(/^mpiexec: host fakeh1: \/nonexistent\/bin\/node was not found there.*--prefix DIR/m);
  });

  it('reports an --iface that a proxied host does not have, naming the host', async () => {
    const r = await runTracked(['-n', '2', '--hosts', 'fakeh1:2', ...RSH, '--iface', 'nosuch0', PMI_RANK]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/^mpiexec: host fakeh1 \(.*\): --iface nosuch0 matches no interface.*; ranks never started: 0, 1; aborting/m);
  });

  it('--dry-run shows each host, its ranks and the command of its proxy', async () => {
    const r = await runMpiexec(['-n', '3', '--hosts', 'localhost,fakeh1:2', ...RSH, '--dry-run', PMI_RANK]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^host localhost \(ranks 0\): fork here: /m);
    expect(r.stdout).toMatch(/^host fakeh1 \(ranks 1, 2\): proxy: \S*fake-rsh\.sh fakeh1 .*tsmpi-proxy\.mjs.*\(launch spec and job key on its stdin\)$/m);
    expect(r.stdout).not.toMatch(/[0-9a-f]{64}/); // the job key never shows
  });

  it('starts the ranks here once the first proxy linked when this machine has several addresses, on the link\'s address', async () => {
    const parsed = parseArgs(['-n', '2', '--hosts', 'localhost,fakeh1', ...RSH, path.join(REPO_ROOT, MH_RANK)]);
    if (parsed.kind !== 'run') throw new Error('bad arguments');
    const text = { out: '', err: '' };
    const sink = (k: 'out' | 'err'): Writable => new Writable({ write(chunk, _enc, cb) { text[k] += String(chunk); cb(); } });
    // A second non-loopback address makes "this machine's only address" ambiguous: the head's rank must wait for the link.
    const table = { ...os.networkInterfaces(), dummy9: [{ address: '203.0.113.9', netmask: '255.255.255.0', family: 'IPv4' as const, mac: '', internal: false, cidr: null }] };
    await loadProxyBackends(); // as main.ts does for a job that names another host
    const job = new Job(parsed.options, placeRanks(2, parsed.options.hosts, null, os.hostname()), {
      log: pino({ level: 'silent' }), stdout: sink('out'), stderr: sink('err'), env: withTransport(process.env), tsxUrl: tsxLoaderUrl(), nodeFlags: [], interfaces: table,
    });
    const status = await job.run();
    expect(text.err).toBe('');
    expect(status).toBe(0);
    const ranks = rankLines(text.out);
    expect(ranks.map((x) => x.host)).toEqual(['localhost', 'fakeh1']);
    // Both listen on the address the proxy's link uses (this machine's real one), not on the made-up second one.
    expect(ranks[0]!.listen).toBe(ranks[1]!.listen);
    expect(ranks[0]!.listen).not.toBe('203.0.113.9');
    expect(ranks[0]!.listen).not.toMatch(/^127\./);
  });
});
