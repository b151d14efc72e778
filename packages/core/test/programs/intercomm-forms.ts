// Intercommunicator buffer collectives in every form (issue 36): the v-variants, ReduceScatter,
// ReduceScatterBlock, Alltoallw and every other buffer collective blocking, nonblocking and
// persistent over COMM_WORLD halves of unequal sizes (ic-forms-body.ts), then the errors: IN_PLACE
// refused naming the call, bad counts and roots, groups that disagree on ReduceScatter's count,
// scans still intracommunicator-only. Run with 2 to 8 processes.
import * as MPI from '@tsmpi/core';
import { check, throwsMPI } from './check.ts';
import { runInterForms } from './ic-forms-body.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;
check(size >= 2, 'run with at least 2 processes');
const nLow = Math.floor(size / 2);
const isLow = rank < nLow;
const half = (await world.split(isLow ? 0 : 1, rank))!;
const inter = await half.createIntercomm(0, world, isLow ? nLow : 0, 21);
const R = inter.remoteSize;
const L = inter.size;

check((await runInterForms(inter, 3, 'main')) > 0, 'every form ran');

// mpi4py spellings reach the Intercomm's own forms (and the point-to-point ones hold as inherited).
check(inter.Allreduce_init === inter.AllreduceInit && inter.Reduce_scatter === inter.ReduceScatter && inter.Gatherv_init === inter.GathervInit, 'mpi4py spellings are the Intercomm methods');
const viaAlias = new Int32Array(1);
const aliasReq = inter.Allreduce_init(Int32Array.of(2), viaAlias, MPI.SUM);
aliasReq.Start();
await aliasReq.Wait();
aliasReq.Free();
check(viaAlias[0] === 2 * R, 'Allreduce_init on an Intercomm');
check(inter.Compare(inter) === MPI.IDENT, 'Compare on an Intercomm');

// Errors: argument checks throw at the call, before anything is sent.
const i32 = (n: number): Int32Array => new Int32Array(n);
await throwsMPI(() => inter.Allgatherv(MPI.IN_PLACE, [i32(R), new Array(R).fill(1), Array.from({ length: R }, (_, j) => j)]), MPI.ERR_BUFFER, 'Allgatherv', 'IN_PLACE');
await throwsMPI(() => inter.Iallgatherv(MPI.IN_PLACE, [i32(R), new Array(R).fill(1), Array.from({ length: R }, (_, j) => j)]), MPI.ERR_BUFFER, 'Iallgatherv', 'IN_PLACE');
await throwsMPI(() => inter.AlltoallvInit(MPI.IN_PLACE, [i32(R), new Array(R).fill(1), Array.from({ length: R }, (_, j) => j)]), MPI.ERR_BUFFER, 'AlltoallvInit', 'IN_PLACE');
await throwsMPI(() => inter.Alltoallw(MPI.IN_PLACE, [new Uint8Array(4 * R), new Array(R).fill(1), Array.from({ length: R }, (_, j) => 4 * j), new Array(R).fill(MPI.INT32)]), MPI.ERR_BUFFER, 'Alltoallw', 'IN_PLACE');
await throwsMPI(() => inter.ReduceScatterBlock(MPI.IN_PLACE, i32(R), MPI.SUM), MPI.ERR_BUFFER, 'ReduceScatterBlock', 'IN_PLACE');
await throwsMPI(() => inter.IreduceScatter(MPI.IN_PLACE, i32(R), new Array(L).fill(1), MPI.SUM), MPI.ERR_BUFFER, 'IreduceScatter', 'IN_PLACE');
await throwsMPI(() => inter.AllreduceInit(MPI.IN_PLACE, i32(1), MPI.SUM), MPI.ERR_BUFFER, 'AllreduceInit', 'IN_PLACE');
await throwsMPI(() => inter.Gatherv(MPI.IN_PLACE, null, MPI.PROC_NULL), MPI.ERR_BUFFER, 'Gatherv', 'IN_PLACE at an idle rank');
await throwsMPI(() => inter.ScattervInit(null, MPI.IN_PLACE, 0), MPI.ERR_BUFFER, 'ScattervInit', 'IN_PLACE as recvbuf');
await throwsMPI(() => inter.ReduceScatterBlock(i32(L * 2 + 1), i32(2), MPI.SUM), MPI.ERR_COUNT, 'ReduceScatterBlock', 'sendbuf not size blocks of recvbuf');
await throwsMPI(() => inter.ReduceScatter(i32(4), i32(4), new Array(L + 1).fill(1), MPI.SUM), MPI.ERR_COUNT, 'ReduceScatter', 'recvcounts not one per local rank');
await throwsMPI(() => inter.Gatherv(i32(1), [i32(4), [5], [0]], MPI.ROOT), MPI.ERR_COUNT, 'Gatherv', R === 1 ? 'counts beyond the buffer' : 'counts not one per remote rank');
await throwsMPI(() => inter.GathervInit(i32(1), null, R), MPI.ERR_ROOT, 'GathervInit', 'root beyond the remote group');
await throwsMPI(() => inter.Alltoallv([i32(R), new Array(R + 1).fill(1), new Array(R + 1).fill(0)], [i32(R), new Array(R).fill(1), new Array(R).fill(0)]), MPI.ERR_COUNT, 'Alltoallv', 'counts not one per remote rank');
await throwsMPI(() => inter.ScanInit(i32(1), i32(1), MPI.SUM), MPI.ERR_COMM, 'ScanInit', 'scans are intracommunicator only');
await throwsMPI(() => inter.Iexscan(i32(1), i32(1), MPI.SUM), MPI.ERR_COMM, 'Iexscan', 'scans are intracommunicator only');

// The groups disagree on ReduceScatter's count (low: 1 item per rank, high: 2): every rank gets ERR_COUNT, and the intercommunicator still works.
const per = isLow ? 1 : 2;
await throwsMPI(() => inter.ReduceScatter(i32(per * L), i32(per), new Array(L).fill(per), MPI.SUM), MPI.ERR_COUNT, 'ReduceScatter', 'counts that differ between the groups');
const after = new Int32Array(1);
await inter.Allreduce(Int32Array.of(1), after, MPI.SUM);
check(after[0] === R, 'a collective after the mismatch');

inter.free();
half.free();
console.log(`intercomm-forms OK ${rank}`);
await MPI.finalize();
