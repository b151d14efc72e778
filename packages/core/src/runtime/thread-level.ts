/**
 * The thread levels of MPI_Init_thread (API.md MPI.init): what init was asked
 * for and what every later thread of the process is held to. The runtime
 * layer records it per thread; api/constants.ts re-exports it to users.
 */
export type ThreadLevel = 'single' | 'funneled' | 'serialized' | 'multiple';
export const THREAD_LEVELS: readonly ThreadLevel[] = ['single', 'funneled', 'serialized', 'multiple'];
