/**
 * The conversion endpoint `/convert/<target>`: body reading, the answer table and the
 * `node:https` request listener.
 */
export * from "./body.ts";
export * from "./context.ts";
export * from "./answer.ts";
export * from "./listener.ts";
