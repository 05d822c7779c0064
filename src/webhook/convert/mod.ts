/**
 * The conversion endpoint `/convert/<target>`: body reading, the answer table, the request bounds
 * and their governor, the conversion exchange of the lean HTTP/1.1 core, the listener Workers that
 * serve the port, the conversion pool, and the versioned plan sets every Worker converts from.
 */
export * from "./body.ts";
export * from "./context.ts";
export * from "./budget.ts";
export * from "./governor.ts";
export * from "./answer.ts";
export * from "./listener.ts";
export * from "./inline_policy.ts";
export * from "./offload.ts";
export * from "./plan_sets.ts";
export * from "./plan_fanout.ts";
export * from "./pool.ts";
export * from "./listener_protocol.ts";
export * from "./listeners.ts";
