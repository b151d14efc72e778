import { describe, expect, it } from 'vitest';
import { ACCEPT_BYTES, CHALLENGE_BYTES, ClientHandshake, HANDSHAKE_STATUS, HELLO_BYTES, ServerHandshake, listenerBinding } from './handshake.ts';

const TCP = listenerBinding('tcp', '127.0.0.1:4000');

function run(serverKey: string, clientKey: string, split = 0, serverListener = TCP, clientListener = TCP) {
  const server = new ServerHandshake(serverKey, serverListener);
  const client = new ClientHandshake(clientKey, 3, 2, clientListener);
  const challenge = server.challenge();
  expect(challenge.length).toBe(CHALLENGE_BYTES);
  let cs: number = HANDSHAKE_STATUS.PENDING;
  if (split > 0) cs = client.feed(challenge.subarray(0, split));
  cs = client.feed(challenge.subarray(split));
  expect(cs).toBe(HANDSHAKE_STATUS.PENDING);
  const hello = client.hello!;
  expect(hello.length).toBe(HELLO_BYTES);
  const trailing = Uint8Array.of(9, 9, 9);
  const withFrames = new Uint8Array(hello.length + 3);
  withFrames.set(hello);
  withFrames.set(trailing, hello.length);
  const ss = server.feed(withFrames);
  return { server, client, ss };
}

describe('job-key handshake', () => {
  it('succeeds with the same key, names process and channel, keeps trailing bytes', () => {
    for (const split of [0, 1, 8, 39]) {
      const { server, client, ss } = run('k3y', 'k3y', split);
      expect(ss).toBe(HANDSHAKE_STATUS.DONE);
      expect([server.process, server.channel]).toEqual([3, 2]);
      expect(Array.from(server.rest)).toEqual([9, 9, 9]);
      expect(server.accept.length).toBe(ACCEPT_BYTES);
      expect(client.feed(server.accept)).toBe(HANDSHAKE_STATUS.DONE);
    }
  });

  it('never puts the key on the wire', () => {
    const key = 'a'.repeat(64);
    const { server, client } = run(key, key);
    const wire = Buffer.concat([server.challenge(), client.hello!, server.accept]).toString('latin1');
    expect(wire.includes(key)).toBe(false);
  });

  it('refuses a wrong key on the server side', () => {
    const { server, ss } = run('right', 'wrong');
    expect(ss).toBe(HANDSHAKE_STATUS.FAILED);
    expect(server.failure).toBe('job key proof does not match');
  });

  it('refuses garbage at its first bad byte', () => {
    const server = new ServerHandshake('k', TCP);
    expect(server.feed(Buffer.from('GET / HTTP/1.1\r\n'))).toBe(HANDSHAKE_STATUS.FAILED);
    const s2 = new ServerHandshake('k', TCP);
    expect(s2.feed(Uint8Array.of(0x54))).toBe(HANDSHAKE_STATUS.PENDING);
    expect(s2.feed(Uint8Array.of(0x00))).toBe(HANDSHAKE_STATUS.FAILED);
  });

  it('lets the client refuse a server that cannot prove the key', () => {
    const { client } = run('k', 'k');
    const impostor = new ServerHandshake('other', TCP);
    const fake = new ClientHandshake('k', 3, 2, TCP);
    fake.feed(impostor.challenge());
    expect(impostor.feed(fake.hello!)).toBe(HANDSHAKE_STATUS.FAILED);
    const forged = new Uint8Array(ACCEPT_BYTES);
    forged.set(impostor.challenge().subarray(0, 8));
    expect(client.feed(forged)).toBe(HANDSHAKE_STATUS.FAILED);
    expect(client.failure).toBe('server job key proof does not match');
  });

  it('fails when the two sides ran over different listeners (a relay between sockets)', () => {
    const unix = listenerBinding('unix', '/tmp/tsmpi-x/t-1-4000');
    // A client that dialled a same-host socket, relayed to the TCP port: the server refuses its HELLO.
    const relayed = run('k', 'k', 0, TCP, unix);
    expect(relayed.ss).toBe(HANDSHAKE_STATUS.FAILED);
    expect(relayed.server.failure).toBe('job key proof does not match');
    // Another rank's port, or another path: refused as well.
    expect(run('k', 'k', 0, listenerBinding('tcp', '127.0.0.1:4001')).ss).toBe(HANDSHAKE_STATUS.FAILED);
    expect(run('k', 'k', 0, unix, listenerBinding('unix', '/tmp/tsmpi-x/t-1-4001')).ss).toBe(HANDSHAKE_STATUS.FAILED);
    expect(run('k', 'k', 0, unix, unix).ss).toBe(HANDSHAKE_STATUS.DONE);
  });
});

// Two coupled jobs (docs/adr/0043-connect-two-jobs.md): a process of the other job proves the pair key,
// and only for a number this job gave the other job's processes.
describe('pair-key handshake of coupled jobs', () => {
  function hello(process: number, key: string): { server: ServerHandshake; status: number; client: ClientHandshake } {
    // Process 3 is the other job's here (keyed by the pair key); 0..2 are this job's (the job key).
    const server = new ServerHandshake((p) => (p === 3 ? 'pair' : p < 3 ? 'job' : null), TCP);
    const client = new ClientHandshake(key, process, 0, TCP);
    client.feed(server.challenge());
    return { server, client, status: server.feed(client.hello!) };
  }

  it('accepts the other job\'s process with the pair key, and its ACCEPT proves the pair key back', () => {
    const { server, client, status } = hello(3, 'pair');
    expect(status).toBe(HANDSHAKE_STATUS.DONE);
    expect(server.process).toBe(3);
    expect(client.feed(server.accept)).toBe(HANDSHAKE_STATUS.DONE);
  });

  it('refuses the pair key for one of this job\'s numbers, the job key for the other job\'s, and numbers of neither', () => {
    expect(hello(1, 'pair').status).toBe(HANDSHAKE_STATUS.FAILED);
    expect(hello(3, 'job').status).toBe(HANDSHAKE_STATUS.FAILED);
    expect(hello(7, 'pair').status).toBe(HANDSHAKE_STATUS.FAILED);
    expect(hello(1, 'job').status).toBe(HANDSHAKE_STATUS.DONE);
  });
});
