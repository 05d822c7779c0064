/**
 * Delegated authentication and authorisation of an HTTP request against the apiserver, as
 * controller-runtime's `filters.WithAuthenticationAndAuthorization` does for `--metrics-secure`:
 * the bearer token goes to a TokenReview (`authentication.k8s.io/v1`); the user it names goes to a
 * SubjectAccessReview (`authorization.k8s.io/v1`) for the request's lower-cased method as verb on
 * its path as nonResourceURL. No token, or a token the apiserver does not authenticate ⇒ 401; a
 * user not allowed ⇒ 403; a review that fails ⇒ 500 (never cached).
 *
 * Results are cached like controller-runtime's delegating authenticator and authorizer: a token's
 * review for 1 min, an allow for 5 min, a deny for 30 s — so a scrape every 15 s costs the
 * apiserver two reviews a minute at most, and a revoked binding is honoured within 5 min.
 */
import { bytesToHex, sha256 } from "../lib/sha256.ts";
import type { KubeObject, ResourceRef } from "./objects.ts";

export const TOKEN_REVIEWS: ResourceRef = {
  group: "authentication.k8s.io",
  version: "v1",
  plural: "tokenreviews",
};
export const SUBJECT_ACCESS_REVIEWS: ResourceRef = {
  group: "authorization.k8s.io",
  version: "v1",
  plural: "subjectaccessreviews",
};

/** The part of the client the reviews use (KubeClient's `create`). */
export interface ReviewClient {
  create<T extends KubeObject>(ref: ResourceRef, obj: T): Promise<T>;
}

/** Who a token belongs to (TokenReview `status.user`). */
export interface ReviewedUser {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** The outcome of {@link DelegatedAuth.check}: 200 lets the request through. */
export interface AccessDecision {
  status: 200 | 401 | 403 | 500;
  /** The answer's body (controller-runtime's texts) or, for 200, "". */
  message: string;
  /** The authenticated user, when there is one. */
  user?: string;
  /** Why a review failed (500) or the authoriser's reason, for logs. */
  detail?: string;
}

export interface DelegatedAuthOptions {
  /** How long a token's review is reused; default 1 min. */
  authnTtlMs?: number;
  /** How long an allow is reused; default 5 min. */
  allowTtlMs?: number;
  /** How long a deny is reused; default 30 s. */
  denyTtlMs?: number;
  /** Entries kept per cache (oldest dropped first); default 1024. */
  maxEntries?: number;
  /** Milliseconds clock; default `Date.now`. */
  now?: () => number;
}

interface TokenReview extends KubeObject {
  status?: { authenticated?: boolean; user?: ReviewedUser; error?: string };
}

interface SubjectAccessReview extends KubeObject {
  status?: { allowed?: boolean; denied?: boolean; reason?: string };
}

/** A small TTL map that drops its oldest entry when full. */
class TtlCache<V> {
  readonly #entries = new Map<string, { value: V; until: number }>();
  constructor(private readonly max: number, private readonly now: () => number) {}

  get(key: string): V | undefined {
    const e = this.#entries.get(key);
    if (e === undefined) return undefined;
    if (e.until <= this.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    this.#entries.delete(key);
    if (this.#entries.size >= this.max) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
    this.#entries.set(key, { value, until: this.now() + ttlMs });
  }
}

/** The bearer token of an `Authorization` header value, or undefined. */
export function bearerToken(authorization: string | null | undefined): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  return m?.[1];
}

/** TokenReview + SubjectAccessReview with the caches above. */
export class DelegatedAuth {
  readonly #client: ReviewClient;
  readonly #authnTtlMs: number;
  readonly #allowTtlMs: number;
  readonly #denyTtlMs: number;
  readonly #tokens: TtlCache<ReviewedUser | null>;
  readonly #decisions: TtlCache<boolean>;

  constructor(client: ReviewClient, opts: DelegatedAuthOptions = {}) {
    const now = opts.now ?? Date.now;
    const max = opts.maxEntries ?? 1024;
    this.#client = client;
    this.#authnTtlMs = opts.authnTtlMs ?? 60_000;
    this.#allowTtlMs = opts.allowTtlMs ?? 300_000;
    this.#denyTtlMs = opts.denyTtlMs ?? 30_000;
    this.#tokens = new TtlCache(max, now);
    this.#decisions = new TtlCache(max, now);
  }

  /** Decides a request from its `Authorization` header, method and path. */
  async check(
    authorization: string | null | undefined,
    method: string,
    path: string,
  ): Promise<AccessDecision> {
    const token = bearerToken(authorization);
    if (token === undefined) return { status: 401, message: "Unauthorized" };
    let user: ReviewedUser | null;
    try {
      user = await this.#authenticate(token);
    } catch (e) {
      return { status: 500, message: "Authentication failed", detail: String(e) };
    }
    if (user === null) return { status: 401, message: "Unauthorized" };
    const verb = method.toLowerCase();
    let allowed: boolean;
    try {
      allowed = await this.#authorize(user, verb, path);
    } catch (e) {
      return {
        status: 500,
        message: `Authorization for user ${user.username} failed`,
        user: user.username,
        detail: String(e),
      };
    }
    return allowed ? { status: 200, message: "", user: user.username } : {
      status: 403,
      message: `Authorization denied for user ${user.username}`,
      user: user.username,
    };
  }

  async #authenticate(token: string): Promise<ReviewedUser | null> {
    const key = bytesToHex(await sha256(token));
    const cached = this.#tokens.get(key);
    if (cached !== undefined) return cached;
    const review = await this.#client.create<TokenReview>(TOKEN_REVIEWS, {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenReview",
      metadata: {},
      spec: { token },
    });
    const s = review.status;
    const user = s?.authenticated === true && s.user?.username ? s.user : null;
    this.#tokens.set(key, user, this.#authnTtlMs);
    return user;
  }

  async #authorize(user: ReviewedUser, verb: string, path: string): Promise<boolean> {
    const key = JSON.stringify([user.username, user.uid ?? "", user.groups ?? [], verb, path]);
    const cached = this.#decisions.get(key);
    if (cached !== undefined) return cached;
    const review = await this.#client.create<SubjectAccessReview>(SUBJECT_ACCESS_REVIEWS, {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      metadata: {},
      spec: {
        user: user.username,
        ...(user.uid ? { uid: user.uid } : {}),
        groups: user.groups ?? [],
        ...(user.extra ? { extra: user.extra } : {}),
        nonResourceAttributes: { path, verb },
      },
    });
    const allowed = review.status?.allowed === true && review.status.denied !== true;
    this.#decisions.set(key, allowed, allowed ? this.#allowTtlMs : this.#denyTtlMs);
    return allowed;
  }
}
