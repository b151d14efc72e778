// Connections without the job key are refused while the job goes on.
// Rank 1 finds its own listening ports (from /proc: this test is Linux-only)
// and tells rank 0, which connects with garbage and with a wrong-key hello.
import fs from 'node:fs';
import net from 'node:net';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
if (world.rank === 1) {
  const ports = listeningPorts();
  check(ports.length > 0, 'rank 1 listens');
  await world.send(ports, 0, 1);
  equal(await world.recv(0, 2), 'still here', 'traffic after the intruders');
} else if (world.rank === 0) {
  const ports = await world.recv<number[]>(1, 1);
  for (const port of ports) {
    // An HTTP request, random bytes, and a well-formed hello whose key proof is wrong.
    const wrongKeyHello = Buffer.concat([Buffer.from([0x54, 0x53, 0x4d, 0x50, 0x49, 0x00, 0x02, 0x00]), Buffer.alloc(72, 7)]);
    for (const payload of [Buffer.from('GET / HTTP/1.0\r\n\r\n'), Buffer.alloc(64, 0xab), wrongKeyHello]) {
      const closed = await new Promise<boolean>((resolve) => {
        const sock = net.connect(port, '127.0.0.1', () => sock.write(payload));
        sock.on('data', () => undefined);
        const timer = setTimeout(() => { sock.destroy(); resolve(false); }, 20_000);
        sock.on('close', () => { clearTimeout(timer); resolve(true); });
        sock.on('error', () => undefined);
      });
      check(closed, `port ${port} closed an intruder connection`);
    }
  }
  await world.send('still here', 1, 2);
}
await world.barrier();
if (world.rank === 0) console.log('bad-key OK');

/** TCP ports this process listens on: socket inodes of /proc/self/fd joined with /proc/net/tcp. */
function listeningPorts(): number[] {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/self/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // fd closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const line of fs.readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length > 9 && f[3] === '0A' && inodes.has(f[9]!)) ports.push(parseInt(f[1]!.split(':')[1]!, 16));
  }
  return ports;
}
await MPI.finalize();
