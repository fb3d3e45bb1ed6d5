export * from "./protocol.js";
export { ConnectionClosedError, CONNECTION_CLOSED, protocolMajor, ProtocolVersionError, RequestCancelledError, SidecarError, } from "./errors.js";
export { CLIENT_NAME, CLIENT_VERSION, SidecarClient, WORK_DONE_PROGRESS_CREATE, } from "./client.js";
export { Connection, MAX_MESSAGE_BYTES, ResponseError } from "./connection.js";
export { openSocket, SidecarServer } from "./server.js";
