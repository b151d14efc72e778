/**
 * A transport factory whose instances run with TransportOptions.secure (mpiexec --secure): how
 * the setting reaches every transport a process makes (its main thread's, its engines', its
 * worker threads'), whoever builds the options, without each builder knowing of it.
 */
import type { TransportFactory } from './interface.ts';

/** `factory`, with `secure: true` added to the options of every instance it makes. */
export function secureTransportFactory(factory: TransportFactory): TransportFactory {
  return (options) => factory({ ...options, secure: true });
}
