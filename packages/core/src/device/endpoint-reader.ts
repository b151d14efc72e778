/**
 * What a thread's device offers about endpoint readers (docs/adr/0019): the endpoint this thread
 * reads, becoming a reader, handing it back, leaving every route, and the route counts for
 * MPI.stats. ReaderRoutes (reader-routes.ts) is it in a process with a route table; NO_READER
 * everywhere else, so callers never test for a missing table.
 */
export interface EndpointReader {
  /** The endpoint this thread reads (readEndpoint), or -1. */
  readonly readingEndpoint: number;
  /** This thread becomes the reader of local endpoint `endpoint` if it may; true when it reads it now. */
  readEndpoint(endpoint: number): boolean;
  /** Hands the endpoint this thread reads back; nothing to do when it reads none. */
  handBack(why: string): Promise<void>;
  /** The thread is about to end (or the process finalizes): every route left (FINs), then the endpoint it reads handed back. */
  leaveAll(why: string): Promise<void>;
  /** This thread's routes to remote readers: connections that carry frames, and data frames sent on them. */
  readonly readerRoutes: { ready: number; framesSent: number };
}

/** A process without a route table: no thread reads an endpoint, and none may. */
export const NO_READER: EndpointReader = {
  readingEndpoint: -1,
  readEndpoint: () => false,
  handBack: () => Promise.resolve(),
  leaveAll: () => Promise.resolve(),
  readerRoutes: { ready: 0, framesSent: 0 },
};
