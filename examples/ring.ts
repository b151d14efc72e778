// Passes a token around the ring of all ranks, each adding its rank; rank 0
// starts it and checks the sum after a full lap.
//   pnpm exec mpiexec -n 4 examples/ring.ts
import * as MPI from '@tsmpi/core';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;
const next = (rank + 1) % size;
const prev = (rank - 1 + size) % size;
const laps = 3;

for (let lap = 0; lap < laps; lap++) {
  if (rank === 0) {
    await world.send({ lap, sum: 0, path: [0] }, next, lap);
    const token = await world.recv<{ lap: number; sum: number; path: number[] }>(prev, lap);
    const expected = (size * (size - 1)) / 2;
    console.log(`lap ${lap}: token visited ${token.path.join(' -> ')} -> 0, sum ${token.sum} (expected ${expected})`);
    if (token.sum !== expected) MPI.abort(1);
  } else {
    const token = await world.recv<{ lap: number; sum: number; path: number[] }>(prev, lap);
    token.sum += rank;
    token.path.push(rank);
    await world.send(token, next, lap);
  }
}
await MPI.finalize();
