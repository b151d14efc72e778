export { FRAME_KIND, FRAME_FLAG, newFrameHeader } from './interface.ts';
export type {
  FrameKind, FrameHeader, Transport, TransportFactory, TransportHandlers, TransportOptions, TransportLog, TransportError,
} from './interface.ts';
