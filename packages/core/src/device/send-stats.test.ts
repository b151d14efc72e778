// MPI.stats's send counters (device.ts #countSent): a send counts once it
// completes without error and never when it fails (an error thrown, its request
// completed with one, its peer lost); and the errors the device raises for a
// request name the API call that started it (docs/ERRORS.md), not a device
// function. Simulated ranks over the loopback transport (loopback-job.test-util.ts).
import { afterEach, describe, expect, it } from 'vitest';
import { ERR_NO_MEM, ERR_PROC_FAILED, ERR_TRUNCATE, MPIError } from '../util/index.ts';
import { turns } from '../util/event-loop-turns.test-util.ts';
import type { Device } from './device.ts';
import { EAGER_LIMIT, destroySimulated, done, recv, send, simulatedJob } from './loopback-job.test-util.ts';

afterEach(destroySimulated);

/** Resolves once `d` has failed (its peer's loss reported), or fails the test after 2,000 turns. */
async function failed(d: Device): Promise<void> {
  for (let i = 0; i < 2000 && d.failure() === null; i++) await turns(1);
  expect(d.failure(), 'the device learned of the lost peer').not.toBeNull();
}

describe('send counters (MPI.stats messagesSent, bytesSent)', () => {
  it('count an eager send at once, a synchronous one once matched, a rendezvous one once its data has left', async () => {
    const [d0, d1] = await simulatedJob(2);
    const bigBytes = 5 * EAGER_LIMIT;
    send(d1!, 1, 0, 1, new Uint8Array(10));
    expect(d1!.stats).toMatchObject({ messagesSent: 1, bytesSent: 10 });
    const sync = send(d1!, 1, 0, 2, new Uint8Array(20), true);
    const big = send(d1!, 1, 0, 3, new Uint8Array(bigBytes));
    expect(d1!.stats, 'neither can complete before its receive is posted').toMatchObject({ messagesSent: 1, bytesSent: 10 });
    await done(recv(d0!, 0, 1, 1, 10));
    await done(recv(d0!, 0, 1, 2, 20));
    await done(sync);
    expect(d1!.stats).toMatchObject({ messagesSent: 2, bytesSent: 30 });
    await done(recv(d0!, 0, 1, 3, bigBytes));
    await done(big);
    expect(d1!.stats).toMatchObject({ messagesSent: 3, bytesSent: 30 + bigBytes });
    expect(d0!.stats).toMatchObject({ messagesReceived: 3, bytesReceived: 30 + bigBytes });
  });

  it('do not count a synchronous or a rendezvous send that fails because its peer is lost', async () => {
    const [d0, d1] = await simulatedJob(2);
    send(d1!, 1, 0, 1, Uint8Array.of(1)); // eager: complete, counted
    const sync = send(d1!, 1, 0, 2, new Uint8Array(20), true, 'Issend');
    const big = send(d1!, 1, 0, 3, new Uint8Array(5 * EAGER_LIMIT), false, 'Isend');
    d0!.destroy(); // rank 0 goes away before it receives either
    await done(sync);
    await done(big);
    expect(sync.error?.errorClass, 'the synchronous send failed').toBe(ERR_PROC_FAILED);
    expect(big.error?.errorClass, 'the rendezvous send failed').toBe(ERR_PROC_FAILED);
    expect(d1!.stats).toMatchObject({ messagesSent: 1, bytesSent: 1 });
  });

  it('do not count a send started after the process failed: it completes with the failure naming its call, and nothing goes out', async () => {
    const [d0, d1, d2] = await simulatedJob(3);
    d0!.destroy();
    await failed(d1!);
    const s = send(d1!, 1, 2, 4, Uint8Array.of(7), false, 'Isend');
    expect(s.done, 'completed at once').toBe(true);
    expect(s.error).toBeInstanceOf(MPIError);
    expect(s.error!.errorClass).toBe(ERR_PROC_FAILED);
    expect(s.error!.call).toBe('Isend');
    expect(s.error!.message).toMatch(/^MPI_ERR_PROC_FAILED: Isend: not sent: this process has failed \(.*lost the connection to process 0/);
    expect(d1!.stats).toMatchObject({ messagesSent: 0, bytesSent: 0 });
    await turns(5); // a loopback frame is delivered within one turn
    expect(d2!.stats.messagesReceived, 'rank 2 received nothing').toBe(0);
  });

  it('do not count a send refused for want of a request slot; the error names the API call', async () => {
    const [d0, d1] = await simulatedJob(2, 64);
    const pending = [];
    let refused: unknown = null;
    for (let i = 0; i < 1000 && refused === null; i++) {
      try {
        pending.push(recv(d1!, 1, 0, 9, 4, 'Irecv'));
      } catch (e) {
        refused = e;
      }
    }
    expect(refused, 'the receives ran out of slots').toBeInstanceOf(MPIError);
    expect((refused as MPIError).call).toBe('Irecv');
    let sendRefused: unknown = null;
    try {
      send(d1!, 1, 0, 5, Uint8Array.of(1), true, 'Ssend');
    } catch (e) {
      sendRefused = e;
    }
    expect(sendRefused).toBeInstanceOf(MPIError);
    expect((sendRefused as MPIError).errorClass).toBe(ERR_NO_MEM);
    expect((sendRefused as MPIError).message).toMatch(/^MPI_ERR_NO_MEM: Ssend: all 64 request slots are in use/);
    expect(d1!.stats).toMatchObject({ messagesSent: 0, bytesSent: 0 });
    // The refused send left nothing behind: an eager one goes and counts; rank 0 gets exactly it.
    send(d1!, 1, 0, 6, Uint8Array.of(2, 3));
    expect(d1!.stats).toMatchObject({ messagesSent: 1, bytesSent: 2 });
    const got = await done(recv(d0!, 0, 1, -1, 8));
    expect([got.tag, got.count, d0!.unexpectedQueued()]).toEqual([6, 2, 0]);
    expect(pending.length).toBeGreaterThan(0);
  });
});

describe('errors the device raises for a request', () => {
  it('name the receive call that started it (ERR_TRUNCATE)', async () => {
    const [d0, d1] = await simulatedJob(2);
    send(d1!, 1, 0, 9, new Uint8Array(16));
    const r = await done(recv(d0!, 0, 1, 9, 4, 'Irecv'));
    expect(r.error?.errorClass).toBe(ERR_TRUNCATE);
    expect(r.error?.message).toMatch(/^MPI_ERR_TRUNCATE: Irecv: message of 16 bytes from endpoint 1 \(tag 9\) is longer than the receive buffer of 4 bytes$/);
  });
});
