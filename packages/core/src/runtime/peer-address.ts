/**
 * A process's transport address from the job's store, as this process's progress reads it.
 * A process whose main thread reads its channels (progress inline) publishes one address,
 * `tcp:P`; one with a channel engine per channel (progress threads or engines) publishes one per
 * channel, `tcp:P:C` (bootstrap.ts). The two do not dial each other: an inline transport dials
 * every channel of a peer at its one address. Progress 'auto' follows the thread level, so a
 * parent at threadLevel 'multiple' that spawns a program initialising at 'single' meets this:
 * instead of the store's "no value was put for key", both sides then get an MPIError that names
 * the other process, the two progress modes and what to set.
 */
import type { PmiClient } from '../pmi/index.ts';
import { mpiError } from '../util/index.ts';

/**
 * Process `p`'s address: its one address (`channel` null, inline progress) or its channel
 * `channel`'s engine's.
 * @param errorClass - the MPI error class of a mismatch (ERR_OTHER at init, ERR_SPAWN when a spawn meets it)
 * @throws MPIError `errorClass` naming the mismatch when `p` published the other form; the store's error when it published neither
 */
export async function peerAddress(pmi: PmiClient, p: number, channel: number | null, call: string, errorClass: number): Promise<string> {
  const key = channel === null ? `tcp:${p}` : `tcp:${p}:${channel}`;
  try {
    return await pmi.get(key);
  } catch (err) {
    const otherForm = await pmi.get(channel === null ? `tcp:${p}:0` : `tcp:${p}`).then(() => true, () => false);
    if (!otherForm) throw err;
    const [mine, theirs] = channel === null ? ['inline', 'threads or engines'] : ['threads or engines', 'inline'];
    // Short enough for mpiexec's one failure line (200 characters with the class and the call).
    throw mpiError(errorClass, call, `process ${p} runs progress ${theirs}, this one ${mine}: they cannot connect; ` +
      "give every process one --progress (auto: threads at threadLevel 'multiple')");
  }
}
