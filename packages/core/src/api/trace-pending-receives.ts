/**
 * The trace recorder's receive requests posted and not yet seen complete (api/trace-recorder.ts):
 * a list in post order, searched from the oldest. An irecv's arrow ends in the Request.* call that
 * completed it, so the recorder keeps each irecv's post order until then.
 */
/**
 * The irecv/Irecv requests not yet seen complete, with their post orders, in post order. A
 * Request.* call takes its receives from the oldest on: requests are mostly completed in the order
 * they were posted, so the one looked for is at or next to the front. (A Map keyed by the request
 * cost a hash insert and delete per message: a third of the recorder's time per message.)
 */
export class PendingReceives<R extends object> {
  readonly #reqs: (R | null)[] = [];
  readonly #orders: number[] = [];
  /** the oldest entry not taken */
  #head = 0;
  /** the next entry to fill */
  #tail = 0;
  /** entries not taken */
  size = 0;

  add(r: R, order: number): void {
    this.#reqs[this.#tail] = r;
    this.#orders[this.#tail] = order;
    this.#tail++;
    this.size++;
  }

  /** Removes `r` and returns its post order; -1 when it is not pending. */
  take(r: R): number {
    const reqs = this.#reqs;
    for (let i = this.#head; i < this.#tail; i++) {
      if (reqs[i] !== r) continue;
      reqs[i] = null;
      this.size--;
      const order = this.#orders[i]!;
      if (i === this.#head) this.#advance();
      else if (this.#tail - this.#head > 2 * this.size + 1024) this.#compact();
      return order;
    }
    return -1;
  }

  #advance(): void {
    const reqs = this.#reqs;
    let h = this.#head;
    while (h < this.#tail && reqs[h] === null) h++;
    this.#head = h;
    if (h === this.#tail) {
      // All taken (the common case at the end of a waitall): refill from the start, arrays kept.
      this.#head = 0;
      this.#tail = 0;
    } else if (this.#tail - h > 2 * this.size + 1024) {
      this.#compact();
    }
  }

  /** Drops the holes that completions out of post order left (so that a search does not walk them again and again). */
  #compact(): void {
    const reqs = this.#reqs, orders = this.#orders;
    let w = 0;
    for (let i = this.#head; i < this.#tail; i++) {
      if (reqs[i] === null) continue;
      reqs[w] = reqs[i]!;
      orders[w] = orders[i]!;
      w++;
    }
    reqs.fill(null, w, this.#tail);
    this.#head = 0;
    this.#tail = w;
  }
}
