/**
 * Proof of the job key by mutual challenge-response: the one HMAC mechanism
 * every connection of a job authenticates with (the ranks' channel handshake
 * in transport-tcp, the wire-up service and the per-host proxies' link in the
 * launcher). The key itself never travels; each side proves it knows the key
 * by a MAC over both sides' fresh nonces and what the connection claims to be.
 *
 *   listening side (server)                connecting side (client)
 *   challenge: nonceS                 ──>
 *                                     <──  nonceC, proofC, identity
 *   proofS                            ──>  checked before anything else is sent
 *
 *   proofC = HMAC-SHA256(jobKey, "C" nonceS nonceC bound)
 *   proofS = HMAC-SHA256(jobKey, "S" nonceS nonceC bound)
 *
 * `bound` is what the proofs vouch for (the client's identity in that
 * protocol, and a label naming the protocol), so a proof made for one
 * protocol or identity is worth nothing in another. Replays fail because the
 * verifier's own nonce is fresh per connection; a reflected proof fails
 * because the two sides' proofs differ in their first byte. Without
 * encryption this does not stop someone on the path from relaying a whole
 * connection: it stops anyone who does not hold the key from joining, and
 * anyone from learning the key from the wire.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Bytes of a nonce. */
export const KEY_PROOF_NONCE_BYTES = 32;
/** Bytes of a proof (HMAC-SHA256). */
export const KEY_PROOF_BYTES = 32;

/** Which side a proof comes from: the connecting (client) or the listening (server) side. */
export type KeyProofSide = 'C' | 'S';

/** A fresh random nonce. */
export function newKeyProofNonce(): Buffer {
  return randomBytes(KEY_PROOF_NONCE_BYTES);
}

/** The proof of `side` for this pair of nonces and this binding. */
export function proveJobKey(jobKey: string, side: KeyProofSide, nonceS: Uint8Array, nonceC: Uint8Array, bound: Uint8Array): Buffer {
  return createHmac('sha256', jobKey).update(side).update(nonceS).update(nonceC).update(bound).digest();
}

/**
 * True when `proof` is `side`'s proof for these nonces and this binding.
 * Compared in constant time; a proof or nonce of the wrong size is false, never a throw.
 */
export function isJobKeyProof(
  jobKey: string, side: KeyProofSide, nonceS: Uint8Array, nonceC: Uint8Array, bound: Uint8Array, proof: Uint8Array,
): boolean {
  if (proof.length !== KEY_PROOF_BYTES || nonceS.length !== KEY_PROOF_NONCE_BYTES || nonceC.length !== KEY_PROOF_NONCE_BYTES) return false;
  return timingSafeEqual(proof, proveJobKey(jobKey, side, nonceS, nonceC, bound));
}

/**
 * The binding of a message-based protocol (the wire-up service, the proxy
 * link): its label and the identity fields of the client's hello, in an
 * unambiguous encoding. Longer than the 8 bytes the channel handshake binds,
 * so no proof of one is ever a proof of the other.
 */
export function keyProofBinding(label: string, ...fields: readonly (string | number)[]): Buffer {
  return Buffer.from(JSON.stringify([label, ...fields]), 'utf8');
}

/**
 * The listening side of one connection: holds its fresh nonce, checks the
 * client's proof once and makes its own. Single use: a second check fails.
 */
export class KeyChallenge {
  readonly nonce: Buffer = newKeyProofNonce();
  readonly #jobKey: string;
  #isUsed = false;

  constructor(jobKey: string) {
    this.#jobKey = jobKey;
  }

  /**
   * Checks the client's answer to this challenge.
   * @returns the server's proof to send back, or null when the client did not prove the key
   */
  answer(nonceC: Uint8Array, bound: Uint8Array, proofC: Uint8Array): Buffer | null {
    if (this.#isUsed) return null;
    this.#isUsed = true;
    if (!isJobKeyProof(this.#jobKey, 'C', this.nonce, nonceC, bound, proofC)) return null;
    return proveJobKey(this.#jobKey, 'S', this.nonce, nonceC, bound);
  }
}

/**
 * The connecting side: answers one challenge, then checks the server's proof
 * before the caller sends anything else. Single use.
 */
export class KeyResponse {
  readonly nonce: Buffer = newKeyProofNonce();
  readonly #jobKey: string;
  readonly #bound: Uint8Array;
  #nonceS: Uint8Array | null = null;
  #isChecked = false;

  constructor(jobKey: string, bound: Uint8Array) {
    this.#jobKey = jobKey;
    this.#bound = bound;
  }

  /** The proof answering the server's nonce; null for a malformed nonce, for the client's own nonce reflected, or a second challenge. */
  respond(nonceS: Uint8Array): Buffer | null {
    if (this.#nonceS !== null || nonceS.length !== KEY_PROOF_NONCE_BYTES || timingSafeEqual(nonceS, this.nonce)) return null;
    this.#nonceS = Uint8Array.from(nonceS);
    return proveJobKey(this.#jobKey, 'C', this.#nonceS, this.nonce, this.#bound);
  }

  /** True once when `proofS` proves the server knows the key for this exchange. */
  isServerProof(proofS: Uint8Array): boolean {
    if (this.#nonceS === null || this.#isChecked) return false;
    this.#isChecked = true;
    return isJobKeyProof(this.#jobKey, 'S', this.#nonceS, this.nonce, this.#bound, proofS);
  }
}
