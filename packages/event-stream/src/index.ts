export {
  EVENT_STREAM_DEFAULTS,
  EventStreamHttpError,
  EventStreamLostError,
  type FollowEventStreamOptions,
  followEventStream,
} from "./event-stream-follower.ts";
export { type EventStreamPart, readEventStream, type ServerSentEvent } from "./event-stream-reader.ts";
