/**
 * What srun's own stderr lines mean (issue 12), so that mpiexec can say
 * "Slurm cancelled it" instead of passing Slurm's text through, and drop
 * lines that only repeat what mpiexec reports itself. Pure: one line in, one
 * classification out; mpiexec feeds it the lines of the proxies' srun that
 * do not come from a proxy.
 *
 * Formats, from Slurm's source (slurmstepd/req.c, srun/launch.c) and seen on
 * Slurm 22.05 in scripts/slurm-cluster.sh (slurm-harness.it.test.ts checks
 * them against the real srun):
 *   slurmstepd-n01: error: *** STEP 1.0 ON n01 CANCELLED AT 2026-11-23T15:40:49 ***        scancel 1.0
 *   slurmstepd-n01: error: *** JOB 3 ON n01 CANCELLED AT 2026-11-23T15:41:14 ***            scancel of a batch job
 *   ... CANCELLED AT <time> DUE TO TIME LIMIT ***   (also PREEMPTION, NODE FAILURE ..., JOB REQUEUE,
 *                                                    TASK FAILURE; "DUE to SIGNAL Terminated" in newer Slurm)
 *   ... *** STEP 1.0 ON n01 FAILED (non-zero exit code or other failure mode) ***
 *   srun: error: n02: task 1: Exited with exit code 3
 *   srun: error: n[01-02]: tasks 0-1: Killed          (a signal's strsignal text; "(core dumped)" may follow)
 *   srun: error: n01: task 0: Out Of Memory
 *   srun: launch/slurm: _step_signal: Terminating StepId=1.0                               srun ends the step itself:
 *   srun: Force Terminated StepId=1.0                                                        --kill-on-bad-exit
 * srun's exit status after a cancel was 137 (tasks killed) for a step and 143
 * (tasks terminated) for the job on 22.05; after --kill-on-bad-exit ended
 * the step because a task exited 3, it was 143 too. scancel of the whole job
 * shows on srun's stderr as the step's CANCELLED line; salloc's own
 * "Job allocation N has been revoked." goes to salloc's stderr, not to an
 * mpiexec running inside it (and salloc also prints it, racing, after an
 * ordinary "Relinquishing job allocation"), so it is not read here.
 *
 * A CANCELLED line alone does not mean scancel: slurmstepd prints the same
 * line (no reason on 22.05, "DUE TO TASK FAILURE" later) when srun ends the
 * step for --kill-on-bad-exit. And after a scancel, the tasks Slurm killed
 * are "bad exits" too, so srun's --kill-on-bad-exit then prints its own
 * "Terminating" line as well (seen on 22.05). SrunOutcome decides at the end,
 * by order. srun prints "Terminating" before it signals the step, so the
 * CANCELLED line srun causes always comes after it. srun prints "Job step
 * aborted: Waiting up to N seconds" when slurmctld tells it the step or job
 * is complete (api/step_launch.c, _job_complete_handler), which happens on
 * scancel but not when srun ends the step itself (seen on 22.05). Rules,
 * first match wins:
 *   1. a CANCELLED line gives a reason other than TASK FAILURE (time limit,
 *      preemption, node failure)                       -> Slurm cancelled it
 *   2. a CANCELLED line or "Job step aborted" came before srun's
 *      "Terminating" (or without one)                  -> Slurm cancelled it
 *   3. "Job step aborted" came at all, and the first task to end was
 *      Terminated (SIGTERM, what scancel sends)        -> Slurm cancelled it
 *   4. a task ended badly                              -> that task (proxy) failed
 * Both orders were seen after a scancel of the job on 22.05: CANCELLED before
 * the tasks' ends, and "aborted", a task's end, "Terminating", CANCELLED.
 * Rule 3 is the case that was left open here before: slurmctld's word to
 * srun slower than the kill it orders (ctld -> slurmd -> task -> srun). CI
 * saw it after a scancel of the job: a task Terminated, srun's
 * "Terminating", CANCELLED, "aborted", the other task Terminated. A task
 * srun's --kill-on-bad-exit blames ends otherwise (an exit code, Killed, a
 * crash), and srun ending the step itself prints no "aborted". mpiexec must
 * not count a "Job step aborted" that follows its own signal to srun
 * (Ctrl-C), which also sets it. The message names the step of the CANCELLED
 * line, else the step of srun's "Terminating" line: CI also saw srun exit
 * after a scancel of the step with no CANCELLED line at all ("aborted", a
 * task Killed, "Terminating", a task Terminated).
 */
import { expandHostlist } from './slurm-hostlist.ts';

export type SrunLine =
  /** Slurm ended the job or step: scancel, time limit, preemption, node failure. */
  | { readonly kind: 'cancelled'; readonly scope: 'job' | 'step'; readonly id: string; readonly node: string; readonly reason: string | null }
  /** slurmstepd gave up on the step after a task failed. */
  | { readonly kind: 'failed'; readonly scope: 'job' | 'step'; readonly id: string; readonly node: string }
  /** Tasks (proxies) ended badly: exit code, or the signal's description. */
  | { readonly kind: 'task-ended'; readonly hosts: readonly string[]; readonly tasks: readonly number[]; readonly exitCode: number | null; readonly signal: string | null }
  /** srun itself is ending step `step` (--kill-on-bad-exit after a task failed). */
  | { readonly kind: 'terminating'; readonly step: string }
  /** slurmctld told srun the step is over (scancel, time limit), or srun was signalled twice. */
  | { readonly kind: 'aborted' }
  /** srun's own chatter that mpiexec's messages replace (or, for cpu binding, that only says task/none is configured). */
  | { readonly kind: 'noise' }
  /** Anything else: pass it through. */
  | { readonly kind: 'other' };

const CANCELLED = /\*\*\* (JOB|STEP) (\S+) ON (\S+) CANCELLED AT \S+(?: DUE (?:TO|to) (.+?))? \*\*\*/;
const FAILED = /\*\*\* (JOB|STEP) (\S+) ON (\S+) FAILED\b/;
const TASK = /^srun: error: (\S+): tasks? ([\d,-]+): (.+)$/;
const TERMINATING = /^srun: (?:launch\/slurm: )?(?:_step_signal: )?Terminating (?:StepId=)?(\d+(?:\.\d+)?)/;
const ABORTED = /^srun: Job step aborted\b/;
const NOISE = [
  /^srun: Force Terminated (?:StepId=)?\d+/,
  /^srun: cluster configuration lacks support for cpu binding$/,
  /^srun: got SIGCONT$/,
  /^srun: forcing job termination$/,
];

/** Expands srun's task list `0-2,5` into [0, 1, 2, 5]; null when malformed. */
function taskIds(text: string): number[] | null {
  const out: number[] = [];
  for (const part of text.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (m === null) return null;
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi < lo || hi - lo > 65536) return null;
    for (let t = lo; t <= hi; t++) out.push(t);
  }
  return out;
}

/**
 * Classifies one line of srun's (or salloc's) stderr, without its newline.
 * @example classifySrunLine('srun: error: n02: task 1: Exited with exit code 3')
 *   // { kind: 'task-ended', hosts: ['n02'], tasks: [1], exitCode: 3, signal: null }
 */
export function classifySrunLine(line: string): SrunLine {
  const text = line.trimEnd();
  let m = CANCELLED.exec(text);
  if (m !== null) return { kind: 'cancelled', scope: m[1] === 'JOB' ? 'job' : 'step', id: m[2]!, node: m[3]!, reason: m[4] ?? null };
  m = FAILED.exec(text);
  if (m !== null) return { kind: 'failed', scope: m[1] === 'JOB' ? 'job' : 'step', id: m[2]!, node: m[3]! };
  m = TERMINATING.exec(text);
  if (m !== null) return { kind: 'terminating', step: m[1]! };
  if (ABORTED.test(text)) return { kind: 'aborted' };
  m = TASK.exec(text);
  if (m !== null) {
    const hosts = expandHostlist(m[1]!.replace(/:$/, ''));
    const tasks = taskIds(m[2]!);
    if (!(hosts instanceof Error) && tasks !== null) {
      const how = m[3]!;
      const exit = /^Exited with exit code (\d+)$/.exec(how);
      if (exit !== null) return { kind: 'task-ended', hosts, tasks, exitCode: Number(exit[1]), signal: null };
      return { kind: 'task-ended', hosts, tasks, exitCode: null, signal: how.replace(/ \(core dumped\)$/, '') };
    }
  }
  for (const n of NOISE) if (n.test(text)) return { kind: 'noise' };
  return { kind: 'other' };
}

/**
 * mpiexec's one line for a cancel: says Slurm did it, which job or step,
 * and why when Slurm said.
 * @example cancelledMessage({ kind: 'cancelled', scope: 'step', id: '1.0', node: 'n01', reason: null })
 *   // 'Slurm cancelled step 1.0 (scancel)'
 */
export function cancelledMessage(c: Extract<SrunLine, { kind: 'cancelled' }>): string {
  const why = c.reason === null ? 'scancel' : c.reason.toLowerCase().replace(/, see slurmctld log for details$/, '');
  return `Slurm cancelled ${c.scope} ${c.id} (${why})`;
}

/** How the proxies' srun ended, as far as Slurm's lines tell. */
export type SrunVerdict =
  /** Slurm ended it (scancel, time limit, preemption, node failure): mpiexec says so. */
  | { readonly kind: 'slurm-cancelled'; readonly message: string }
  /** A proxy failed first (exit code or signal); any CANCELLED line was srun's own --kill-on-bad-exit. */
  | { readonly kind: 'task-failed'; readonly host: string; readonly task: number; readonly exitCode: number | null; readonly signal: string | null }
  /** Nothing in srun's lines explains the end (e.g. every proxy exited 0). */
  | { readonly kind: 'none' };

/**
 * Reads srun's stderr line by line and tells, once srun has exited, why the
 * step ended (see the file comment for the rules).
 * @example const o = new SrunOutcome(); for (const l of lines) o.push(l); o.verdict()
 */
export class SrunOutcome {
  /** A CANCELLED line with a reason of Slurm's own (rule 1). */
  #cancelWithReason: Extract<SrunLine, { kind: 'cancelled' }> | null = null;
  /** Any CANCELLED line without a reason, for the message. */
  #cancelAny: Extract<SrunLine, { kind: 'cancelled' }> | null = null;
  /** A CANCELLED or "aborted" line came before srun's "Terminating" (rule 2). */
  #slurmFirst = false;
  #firstFailure: Extract<SrunLine, { kind: 'task-ended' }> | null = null;
  #srunTerminated = false;
  /** The step srun's "Terminating" line names: the message's step when no CANCELLED line came. */
  #terminatedStep: string | null = null;
  /** "Job step aborted" came, in any order (rule 3). */
  #aborted = false;

  /** Takes one line; returns its classification (so the caller can drop noise). */
  push(line: string): SrunLine {
    const c = classifySrunLine(line);
    switch (c.kind) {
      case 'cancelled':
        if (c.reason !== null && !/^TASK FAILURE$/i.test(c.reason)) this.#cancelWithReason ??= c;
        else if (c.reason === null) {
          this.#cancelAny ??= c;
          if (!this.#srunTerminated) this.#slurmFirst = true;
        }
        break;
      case 'aborted':
        if (!this.#srunTerminated) this.#slurmFirst = true;
        this.#aborted = true;
        break;
      case 'terminating':
        this.#srunTerminated = true;
        this.#terminatedStep ??= c.step;
        break;
      case 'task-ended':
        this.#firstFailure ??= c;
        break;
      default:
        break;
    }
    return c;
  }

  /**
   * Whether srun has already said that Slurm is ending the step (a CANCELLED line or "Job step aborted"),
   * before srun exits and the verdict is known: mpiexec then waits for srun's end instead of reporting
   * the proxies it lost (srun waits up to 32 s for the step's tasks after that, seen on 22.05).
   */
  get isSlurmEnding(): boolean {
    return this.#cancelWithReason !== null || this.#cancelAny !== null || this.#aborted;
  }

  /** The verdict from every line pushed so far; call it after srun exited. */
  verdict(): SrunVerdict {
    if (this.#cancelWithReason !== null) return { kind: 'slurm-cancelled', message: cancelledMessage(this.#cancelWithReason) };
    if (this.#slurmFirst) return { kind: 'slurm-cancelled', message: this.#scancelMessage() };
    const f = this.#firstFailure;
    if (this.#aborted && f !== null && f.signal === 'Terminated') return { kind: 'slurm-cancelled', message: this.#scancelMessage() };
    if (f !== null) return { kind: 'task-failed', host: f.hosts[0]!, task: f.tasks[0]!, exitCode: f.exitCode, signal: f.signal };
    return { kind: 'none' };
  }

  /**
   * A scancel without a reason: the step of the CANCELLED line, else of srun's "Terminating" line
   * (srun may exit before slurmstepd's CANCELLED line reaches it: seen in CI), else no step.
   */
  #scancelMessage(): string {
    if (this.#cancelAny !== null) return cancelledMessage(this.#cancelAny);
    return this.#terminatedStep === null ? 'Slurm cancelled the step (scancel)' : `Slurm cancelled step ${this.#terminatedStep} (scancel)`;
  }
}
