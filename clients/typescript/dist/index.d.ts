export * from "./protocol.js";
export { ConnectionClosedError, CONNECTION_CLOSED, protocolMajor, ProtocolVersionError, RequestCancelledError, SidecarError, } from "./errors.js";
export { CLIENT_NAME, CLIENT_VERSION, SidecarClient, type ClientOptions, type DidAppendParams, type DidCompactParams, type DidReloadParams, type ProgressToken, type ServerProgress, WORK_DONE_PROGRESS_CREATE, type SpawnOptions, type SummarizeHandler, type SummarizeParams, type SummarizeResult, type WorkDoneProgress, } from "./client.js";
export { Connection, MAX_MESSAGE_BYTES, ResponseError, type Disposable, type Event } from "./connection.js";
export { openSocket, SidecarServer, type ServeOptions } from "./server.js";
