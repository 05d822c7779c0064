/**
 * Helper process for control_plane_test.ts: starts a control plane, prints
 * `{"dir": ..., "pgids": [...]}` on one stdout line, then waits to be signalled or killed.
 */
import { startControlPlane } from "../control_plane.ts";

const cp = await startControlPlane({ name: "held" });
console.log(JSON.stringify({ dir: cp.dir, pgids: cp.pgids }));
// Keep the event loop alive until a signal ends the process.
setInterval(() => {}, 60_000);
