import { describe, expect, it } from 'vitest';
import {
  KEY_PROOF_BYTES, KEY_PROOF_NONCE_BYTES, KeyChallenge, KeyResponse, isJobKeyProof, keyProofBinding, proveJobKey,
} from './key-proof.ts';

const KEY = 'ab'.repeat(32);
const BOUND = keyProofBinding('test', 3, 4242);

/** One full exchange; returns what each side concluded. */
function exchange(serverKey: string, clientKey: string, clientBound = BOUND, serverBound = BOUND) {
  const challenge = new KeyChallenge(serverKey);
  const response = new KeyResponse(clientKey, clientBound);
  const proofC = response.respond(challenge.nonce)!;
  const proofS = challenge.answer(response.nonce, serverBound, proofC);
  return { proofC, proofS, clientAccepts: proofS !== null && response.isServerProof(proofS) };
}

describe('job-key proof', () => {
  it('both sides accept each other with the same key; the key is in no message', () => {
    const { proofC, proofS, clientAccepts } = exchange(KEY, KEY);
    expect(proofC.length).toBe(KEY_PROOF_BYTES);
    expect(proofS).not.toBeNull();
    expect(clientAccepts).toBe(true);
    for (const m of [proofC, proofS!]) expect(Buffer.from(m).toString('latin1')).not.toContain(KEY);
  });

  it('a client with a wrong key is refused', () => {
    expect(exchange(KEY, 'cd'.repeat(32)).proofS).toBeNull();
  });

  it('a server with a wrong key is refused by the client', () => {
    // The fake server cannot check the client, so it answers something: its own proof under its key.
    const fake = new KeyChallenge('cd'.repeat(32));
    const response = new KeyResponse(KEY, BOUND);
    response.respond(fake.nonce);
    const guessed = proveJobKey('cd'.repeat(32), 'S', fake.nonce, response.nonce, BOUND);
    expect(response.isServerProof(guessed)).toBe(false);
  });

  it('a proof is bound to the identity it was made for', () => {
    expect(exchange(KEY, KEY, keyProofBinding('test', 3, 4242), keyProofBinding('test', 4, 4242)).proofS).toBeNull();
    expect(exchange(KEY, KEY, keyProofBinding('pmi', 3), keyProofBinding('proxy', 3)).proofS).toBeNull();
  });

  it('a recorded answer replayed to a new challenge is refused', () => {
    const first = new KeyChallenge(KEY);
    const response = new KeyResponse(KEY, BOUND);
    const proofC = response.respond(first.nonce)!;
    expect(first.answer(response.nonce, BOUND, proofC)).not.toBeNull();
    // The same answer again: to the used challenge and to a fresh one.
    expect(first.answer(response.nonce, BOUND, proofC)).toBeNull();
    expect(new KeyChallenge(KEY).answer(response.nonce, BOUND, proofC)).toBeNull();
  });

  it('a recorded server proof replayed to a new client is refused', () => {
    const challenge = new KeyChallenge(KEY);
    const old = new KeyResponse(KEY, BOUND);
    const proofS = challenge.answer(old.nonce, BOUND, old.respond(challenge.nonce)!)!;
    // An attacker replays the same challenge nonce and the recorded proof to another client.
    const victim = new KeyResponse(KEY, BOUND);
    victim.respond(challenge.nonce);
    expect(victim.isServerProof(proofS)).toBe(false);
  });

  it('a reflected proof is refused: the client proof is not a server proof, nor the reverse', () => {
    const response = new KeyResponse(KEY, BOUND);
    const nonceS = Buffer.alloc(KEY_PROOF_NONCE_BYTES, 7);
    const proofC = response.respond(nonceS)!;
    expect(response.isServerProof(proofC)).toBe(false);
    // A server that receives its own kind of proof as a client answer refuses it.
    const challenge = new KeyChallenge(KEY);
    const proofSasC = proveJobKey(KEY, 'S', challenge.nonce, Buffer.alloc(KEY_PROOF_NONCE_BYTES, 1), BOUND);
    expect(challenge.answer(Buffer.alloc(KEY_PROOF_NONCE_BYTES, 1), BOUND, proofSasC)).toBeNull();
  });

  it('a client refuses its own nonce reflected as the challenge, and a second challenge', () => {
    const response = new KeyResponse(KEY, BOUND);
    expect(response.respond(response.nonce)).toBeNull();
    expect(response.respond(Buffer.alloc(KEY_PROOF_NONCE_BYTES, 9))).not.toBeNull();
    expect(response.respond(Buffer.alloc(KEY_PROOF_NONCE_BYTES, 8))).toBeNull();
  });

  it('truncated or oversized nonces and proofs are refused without throwing', () => {
    const challenge = new KeyChallenge(KEY);
    const response = new KeyResponse(KEY, BOUND);
    const proofC = response.respond(challenge.nonce)!;
    for (const cut of [0, 1, 16, KEY_PROOF_BYTES - 1]) {
      expect(new KeyChallenge(KEY).answer(response.nonce, BOUND, proofC.subarray(0, cut))).toBeNull();
      expect(isJobKeyProof(KEY, 'C', challenge.nonce, response.nonce, BOUND, proofC.subarray(0, cut))).toBe(false);
      expect(isJobKeyProof(KEY, 'C', challenge.nonce.subarray(0, cut), response.nonce, BOUND, proofC)).toBe(false);
    }
    expect(isJobKeyProof(KEY, 'C', challenge.nonce, response.nonce, BOUND, Buffer.concat([proofC, Buffer.of(0)]))).toBe(false);
    expect(new KeyResponse(KEY, BOUND).respond(challenge.nonce.subarray(0, 31))).toBeNull();
    expect(new KeyResponse(KEY, BOUND).isServerProof(proofC)).toBe(false); // no challenge answered yet
    expect(isJobKeyProof(KEY, 'C', challenge.nonce, response.nonce, BOUND, proofC)).toBe(true);
  });

  it('a server proof is checked only once', () => {
    const challenge = new KeyChallenge(KEY);
    const response = new KeyResponse(KEY, BOUND);
    const proofS = challenge.answer(response.nonce, BOUND, response.respond(challenge.nonce)!)!;
    expect(response.isServerProof(proofS)).toBe(true);
    expect(response.isServerProof(proofS)).toBe(false);
  });
});
