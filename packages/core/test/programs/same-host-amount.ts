// Rank 0 sends rank 1 an amount of 100 (an object message) and a buffer that names it; rank 1
// prints both as it received them, and every rank its peak memory. Rank 1 starts MPI a while after
// rank 0 (TSMPI_TEST_RANK1_DELAY_MS): a local attacker who watches rank 0 bind its sockets has that
// long to squat rank 1's before it binds them (issue 35; test/same-host-attack.it.test.ts).
import * as MPI from '@tsmpi/core';
import { equal } from './check.ts';

if (process.env.TSMPI_RANK === '1') await new Promise((r) => setTimeout(r, Number(process.env.TSMPI_TEST_RANK1_DELAY_MS ?? '0')));
await MPI.init();
const world = MPI.COMM_WORLD;
equal(world.size, 2, 'run with 2 processes');
if (world.rank === 0) {
  await world.send({ amount: 100, memo: 'plaintext-marker-object' }, 1, 1);
  await world.Send(new TextEncoder().encode('plaintext-marker-buffer amount=100'), 1, 2);
} else {
  const o = await world.recv<{ amount: number; memo: string }>(0, 1);
  console.log(`amount=${o.amount} memo=${o.memo}`);
  const buf = new Uint8Array(64);
  const st = await world.Recv(buf, 0, 2);
  console.log(`buffer=${new TextDecoder().decode(buf.subarray(0, st.getCount()))}`);
}
await world.barrier();
console.log(`rank ${world.rank} maxRSS=${process.resourceUsage().maxRSS}`);
await MPI.finalize();
