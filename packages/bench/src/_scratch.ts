import * as MPI from '@tsmpi/core';
await MPI.init();
const w = MPI.COMM_WORLD;
const N = Number(process.env.N ?? 2000);
const peer = w.rank ^ 1;
const sb = new Float64Array(1), rb = new Float64Array(1);
async function t(name: string, op: () => Promise<unknown>) {
  for (let i = 0; i < 100; i++) await op();
  await w.barrier();
  const s: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < N; i++) { const a = performance.now(); await op(); s.push(performance.now() - a); }
  const mean = (performance.now() - t0) / N * 1000;
  s.sort((a, b) => a - b);
  if (w.rank === 0) console.log(name.padEnd(12), 'mean', mean.toFixed(1), 'median', (s[N >> 1]! * 1000).toFixed(1));
}
await t('sendrecv', () => w.Sendrecv(sb, peer, 1, rb, peer, 1));
await t('barrier', () => w.barrier());
await t('Allreduce', () => w.Allreduce(sb, rb, MPI.SUM));
await t('dup', async () => (await w.dup()).free());
await t('sendrecv', () => w.Sendrecv(sb, peer, 1, rb, peer, 1));
await MPI.finalize();
