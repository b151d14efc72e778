// Rank 1 sends 50 messages of 8 bytes to rank 0; every rank then prints its MPI.stats() totals
// as a line "stats <rank> <json>" and finalizes. stats-report.it.test.ts compares those lines with
// what finalize reported to mpiexec (--report-json).
import * as MPI from '@tsmpi/core';
import { equal } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const COUNT = 50;
if (world.rank === 1) {
  for (let i = 0; i < COUNT; i++) await world.Send(new Float64Array([i]), 0, 7);
} else if (world.rank === 0) {
  const buf = new Float64Array(1);
  for (let i = 0; i < COUNT; i++) {
    await world.Recv(buf, 1, 7);
    equal(buf[0], i, `message ${i}`);
  }
}
const { messagesSent, messagesReceived, bytesSent, bytesReceived } = MPI.stats();
console.log(`stats ${world.rank} ${JSON.stringify({ messagesSent, messagesReceived, bytesSent, bytesReceived })}`);
await MPI.finalize();
