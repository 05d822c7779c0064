/**
 * The HTTP servers every role runs: bind addresses, readiness, the `node:http(s)` core with its
 * limits and shared shutdown, the TLS listener with certificate reload, and the plain
 * health/metrics listener.
 */
export * from "./bind_address.ts";
export * from "./readiness.ts";
export * from "./socket_limits.ts";
export * from "./node_server.ts";
export * from "./http1_server.ts";
export * from "./certificate_watch.ts";
export * from "./tls_server.ts";
export * from "./plain_server.ts";
