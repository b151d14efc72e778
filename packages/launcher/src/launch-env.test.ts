// The hostfile and ssh-argument variables of other MPIs' launchers, as the Kubeflow MPI Operator sets them (launch-env.ts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { applyLaunchEnv } from './launch-env.ts';
import { parseArgs, type LaunchOptions } from './options.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'launch-env-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const OMPI_FILE = path.join(dir, 'ompi-hostfile');
// The Operator's two formats: Open MPI's "slots=N", MPICH's and Intel's "host:N".
writeFileSync(OMPI_FILE, 'pi-worker-0.pi.default.svc slots=2\npi-worker-1.pi.default.svc slots=2\n');
const HYDRA_FILE = path.join(dir, 'hydra-hostfile');
writeFileSync(HYDRA_FILE, 'pi-worker-0.pi.default.svc:4\n');

function options(...argv: string[]): LaunchOptions {
  const p = parseArgs([...argv, 'app.mjs']);
  if (p.kind !== 'run') throw new Error(`parse: ${JSON.stringify(p)}`);
  return p.options;
}

function apply(o: LaunchOptions, env: NodeJS.ProcessEnv): { options: LaunchOptions; notes: readonly string[] } {
  const r = applyLaunchEnv(o, env);
  if (r instanceof Error) throw r;
  return r;
}

describe('applyLaunchEnv', () => {
  it("reads Open MPI's hostfile variable and ssh arguments (the Operator's launcher pod)", () => {
    const r = apply(options('-n', '4'), { OMPI_MCA_orte_default_hostfile: OMPI_FILE, OMPI_MCA_plm_rsh_args: '-o ConnectionAttempts=10' });
    expect(r.options.hosts).toEqual([{ host: 'pi-worker-0.pi.default.svc', slots: 2 }, { host: 'pi-worker-1.pi.default.svc', slots: 2 }]);
    expect(r.options.launcherExec).toEqual(['ssh', '-o', 'ConnectionAttempts=10']);
    expect(r.notes.join('\n')).toContain('OMPI_MCA_orte_default_hostfile');
  });

  it("reads MPICH's and Intel MPI's variables", () => {
    const mpich = apply(options(), { HYDRA_HOST_FILE: HYDRA_FILE, HYDRA_LAUNCH_EXTRA_ARGS: '-p 2222' });
    expect(mpich.options.hosts).toEqual([{ host: 'pi-worker-0.pi.default.svc', slots: 4 }]);
    expect(mpich.options.launcherExec).toEqual(['ssh', '-p', '2222']);
    const intel = apply(options(), { I_MPI_HYDRA_HOST_FILE: HYDRA_FILE, I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS: '-o ConnectionAttempts=10' });
    expect(intel.options.hosts).toHaveLength(1);
    expect(intel.options.launcherExec).toEqual(['ssh', '-o', 'ConnectionAttempts=10']);
  });

  it('appends the ssh arguments to --launcher-exec', () => {
    const r = apply(options('--launcher-exec', 'ssh -F my.conf'), { OMPI_MCA_plm_rsh_args: '-o ConnectionAttempts=10' });
    expect(r.options.launcherExec).toEqual(['ssh', '-F', 'my.conf', '-o', 'ConnectionAttempts=10']);
  });

  it('leaves hosts given on the command line alone', () => {
    const r = apply(options('--hosts', 'a,b'), { OMPI_MCA_orte_default_hostfile: OMPI_FILE });
    expect(r.options.hosts).toEqual([{ host: 'a', slots: null }, { host: 'b', slots: null }]);
  });

  it('does nothing under --launcher fork or slurm, nor inside a Slurm allocation unless --launcher ssh', () => {
    const env = { OMPI_MCA_orte_default_hostfile: OMPI_FILE, OMPI_MCA_plm_rsh_args: '-o X=1' };
    expect(apply(options('--launcher', 'fork'), env).options.hosts).toBeNull();
    expect(apply(options('--launcher', 'slurm'), env).options.launcherExec).toBeNull();
    expect(apply(options(), { ...env, SLURM_JOB_ID: '7' }).options.hosts).toBeNull();
    expect(apply(options('--launcher', 'ssh'), { ...env, SLURM_JOB_ID: '7' }).options.hosts).toHaveLength(2);
  });

  it('names the variable when its file cannot be read or is not a hostfile', () => {
    const missing = applyLaunchEnv(options(), { HYDRA_HOST_FILE: path.join(dir, 'nope') });
    expect(missing).toBeInstanceOf(Error);
    expect((missing as Error).message).toMatch(/^HYDRA_HOST_FILE=.*nope: cannot read the hostfile \(ENOENT\)/);
    const bad = path.join(dir, 'bad');
    writeFileSync(bad, '-oProxyCommand=evil\n');
    const refused = applyLaunchEnv(options(), { OMPI_MCA_orte_default_hostfile: bad });
    expect((refused as Error).message).toMatch(/from OMPI_MCA_orte_default_hostfile.*may not begin with "-"/);
    expect((applyLaunchEnv(options(), { OMPI_MCA_plm_rsh_args: "-o 'x" }) as Error).message).toMatch(/OMPI_MCA_plm_rsh_args=.*unbalanced quote/);
  });
});

describe('the ssh retry window', () => {
  it('is 120 s for hosts from the environment, none for hosts from the command line, --connect-retry wins', () => {
    expect(apply(options(), { OMPI_MCA_orte_default_hostfile: OMPI_FILE }).options.connectRetrySec).toBe(120);
    expect(apply(options('--hosts', 'a'), { OMPI_MCA_orte_default_hostfile: OMPI_FILE }).options.connectRetrySec).toBeNull();
    expect(apply(options('--connect-retry', '5'), { OMPI_MCA_orte_default_hostfile: OMPI_FILE }).options.connectRetrySec).toBe(5);
    expect(apply(options('--connect-retry', '0'), { HYDRA_HOST_FILE: HYDRA_FILE }).options.connectRetrySec).toBe(0);
  });
});
