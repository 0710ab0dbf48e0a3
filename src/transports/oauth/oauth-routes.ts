/**
 * What oidc-provider serves, as it routes it, and nothing else: its router matches a path in any
 * ASCII case (a non-ASCII character never folds into an ASCII one), with or without one trailing
 * slash, and answers HEAD wherever it answers GET. A request is classified here from the path and
 * method the provider's own router sees (Koa's `ctx.path`, inside the provider), so no spelling of
 * a path is served uncounted: every route served is listed with what it is counted as, and any
 * other method or path under the provider is refused before its router (404, or 405 with
 * `Allow`). Routes the provider would serve that this server does not use (registration reads,
 * the logout confirmation) are refused the same way. test/transports/oauth-limits.test.ts checks
 * the table against the provider's answers.
 */
import type Provider from "oidc-provider";
import {
  AUTHORIZATION,
  type Limited,
  type OAuthLimits,
  type RateLimit,
  REGISTRATION,
  refusal,
} from "./rate-limit.js";

type Counted = "registration" | "authorization" | undefined;
interface Route {
  /** Segments; `*` matches one non-empty segment. */
  path: string;
  methods: Partial<Record<string, Counted>>;
}

/** The routes served (oauth-provider.ts's ROUTES, the features on there, and discovery). */
const SERVED: Route[] = [
  { path: "/oauth/authorize", methods: { GET: "authorization" } },
  // The return from the sign-in page: finishes an interaction already counted, stores none.
  { path: "/oauth/authorize/*", methods: { GET: undefined } },
  { path: "/oauth/register", methods: { POST: "registration" } },
  { path: "/oauth/token", methods: { POST: undefined, OPTIONS: undefined } },
  { path: "/oauth/revoke", methods: { POST: undefined, OPTIONS: undefined } },
  { path: "/oauth/jwks", methods: { GET: undefined, OPTIONS: undefined } },
  { path: "/.well-known/openid-configuration", methods: { GET: undefined, OPTIONS: undefined } },
  { path: "/.well-known/oauth-authorization-server", methods: { GET: undefined, OPTIONS: undefined } },
];

const upper = (s: string): string => s.replace(/[a-z]/g, (c) => c.toUpperCase());

function matches(route: string, path: string): boolean {
  const want = route.split("/");
  const got = path.split("/");
  if (want.length !== got.length) return false;
  return want.every((w, i) => (w === "*" ? (got[i] ?? "") !== "" : upper(w) === upper(got[i] ?? "")));
}

export type Classified =
  | { served: true; path: string; counted: Counted }
  | { served: false; status: 404 | 405; allow?: string };

/** The route a request reaches as the provider routes it, and what it is counted as; or its refusal. */
export function classify(method: string, path: string): Classified {
  const verb = method === "HEAD" ? "GET" : upper(method);
  // The provider tries the path as given first, then without one trailing slash.
  const candidates = path.length > 1 && path.endsWith("/") ? [path, path.slice(0, -1)] : [path];
  for (const candidate of candidates) {
    const route = SERVED.find((r) => matches(r.path, candidate));
    if (route === undefined) continue;
    if (verb in route.methods) return { served: true, path: route.path, counted: route.methods[verb] };
    const allow = Object.keys(route.methods);
    if (allow.includes("GET")) allow.push("HEAD");
    return { served: false, status: 405, allow: allow.join(", ") };
  }
  return { served: false, status: 404 };
}

const LIMITED: Record<Exclude<Counted, undefined>, (l: OAuthLimits) => [RateLimit, Limited]> = {
  registration: (l) => [l.registrations, REGISTRATION],
  authorization: (l) => [l.authorizations, AUTHORIZATION],
};

/** The provider's first middleware: refuses what is not served, counts what is limited. */
export function routeAndCount(provider: Provider, limits: OAuthLimits): void {
  provider.use(async (ctx, next) => {
    const route = classify(ctx.method, ctx.path);
    if (!route.served) {
      ctx.status = route.status;
      if (route.allow !== undefined) ctx.set("allow", route.allow);
      ctx.type = "application/json";
      ctx.body = {
        error: route.status === 404 ? "not_found" : "method_not_allowed",
        error_description:
          route.status === 404
            ? "No such endpoint on this authorization server"
            : `This endpoint answers ${route.allow ?? ""} only`,
      };
      return;
    }
    if (route.counted !== undefined) {
      const [limit, what] = LIMITED[route.counted](limits);
      const refused = await refusal(limits, limit, what, ctx.req);
      if (refused !== undefined) {
        ctx.status = 429;
        ctx.set(refused.headers);
        ctx.body = refused.body;
        return;
      }
    }
    await next();
  });
}
