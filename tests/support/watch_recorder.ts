/**
 * Records every watch event of one API path from now on, with its resourceVersion as a number.
 * On one etcd, resourceVersions are its global revision counter, so events of different objects
 * can be put in order — how a test proves "A happened before B" without sampling races.
 */
import type { ControlPlane } from "./control_plane.ts";

export interface RecordedEvent {
  type: string;
  rv: number;
  // deno-lint-ignore no-explicit-any
  object: any;
}

export interface WatchRecorder extends AsyncDisposable {
  readonly events: readonly RecordedEvent[];
}

/** Admin HTTP client for the control plane (its kubeconfig's CA and client certificate). */
export function adminHttpClient(cp: ControlPlane): Deno.HttpClient {
  const cluster = cp.kubeConfig.getCurrentCluster();
  const user = cp.kubeConfig.getCurrentUser();
  const dec = (s: string | undefined) => (s ? atob(s) : undefined);
  const caData = dec(cluster?.caData);
  return Deno.createHttpClient({
    caCerts: caData ? [caData] : undefined,
    cert: dec(user?.certData),
    key: dec(user?.keyData),
  });
}

/**
 * Starts a watch on `path` (a collection URL, e.g. `/apis/apps/v1/namespaces/x/deployments`,
 * optionally with `?fieldSelector=...`), beginning with the current state (initial ADDED events).
 */
export async function recordWatch(cp: ControlPlane, path: string): Promise<WatchRecorder> {
  const client = adminHttpClient(cp);
  const ac = new AbortController();
  const events: RecordedEvent[] = [];
  const sep = path.includes("?") ? "&" : "?";
  let res: Response;
  // 429 "storage is (re)initializing": a resource's watch cache is still warming up.
  for (let attempt = 0;; attempt++) {
    res = await fetch(`${cp.server}${path}${sep}watch=1&allowWatchBookmarks=false`, {
      client,
      signal: ac.signal,
    });
    if (res.status !== 429 || attempt >= 60) break;
    await res.body?.cancel();
    await new Promise((r) => setTimeout(r, 500));
  }
  if (!res.ok || !res.body) {
    client.close();
    throw new Error(`watch ${path}: HTTP ${res.status} ${await res.text()}`);
  }
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buf = "";
    try {
      for await (const chunk of res.body!) {
        buf += decoder.decode(chunk, { stream: true });
        let nl;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (!line) continue;
          const ev = JSON.parse(line);
          events.push({
            type: ev.type,
            rv: Number(ev.object?.metadata?.resourceVersion ?? 0),
            object: ev.object,
          });
        }
      }
    } catch {
      // aborted on dispose
    }
  })();
  return {
    events,
    async [Symbol.asyncDispose]() {
      ac.abort();
      await reading;
      client.close();
    },
  };
}
